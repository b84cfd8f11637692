import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createPublicClient, createWalletClient, http, parseUnits, type Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { newUser, openSession, startPay, startPaymentTest, transferFor, unary, untilAppWaits, type PaymentTest, type TestUser } from './support/payments.ts';
import { deployShapedToken, shapedTokens } from './support/shaped-tokens.ts';
import { tokenAllowCommand } from '../src/cli/token-commands.ts';
import { ratePublishCommand } from '../src/cli/payment-commands.ts';
import { createLogger } from '../src/shared/logger.ts';
import { cliDeps } from '../src/main.ts';

// Paying in a token the platform did not deploy, as in VIXP (docs/payments.md "Rate notices per
// token", docs/decisions/tokens.md): a USDC-shaped token (contracts/test/UsdcLike.sol: 6 decimals,
// EIP-3009 in the domain ("USD Coin", "2")) deployed on the platform's anvil by an outside account,
// `vixpay token allow`ed and priced by its own KRW notice; a store priced in KRW is paid in it over
// gRPC by a custodial user, refunded with CancelPayment, rewards it, and REST pay moves it (and a
// USDT-like token, the account path, by REST pay); rewards in the account path's USDT-like and
// BEP-20 tokens. Every balance is read from the chain, in base units.

let p: PaymentTest;
let usdc: Address;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
let user: TestUser;
let fund: (to: string, units: bigint) => Promise<void>;
let deployUsdt: (kind?: 'usdt' | 'bep20') => Promise<{ usdt: Address; holder: Address; fundUsdt: (to: string, units: bigint) => Promise<void>; usdtOf: (address: string) => Promise<bigint> }>;
let onChain: (address: string) => Promise<bigint>;

const network = () => p.t.platform.config.paymentNetwork;
const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
const usdcOf = (amount: string) => parseUnits(amount, 6);

before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '6', PAYMENT_PAIRING_WINDOW_SECONDS: '6' });
  const { url, client: chainClient, chainId } = p.t.platform.chains[network()];
  const client = createPublicClient({ transport: http(url) });
  const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 8 });
  const wallet = createWalletClient({ account: deployer, chain: { ...chainClient.chain!, id: chainId }, transport: http(url) });
  usdc = await deployShapedToken(client as never, wallet, 'usdc');
  const abi = shapedTokens.usdc.abi;
  fund = async (to, units) => {
    const hash = await wallet.writeContract({ address: usdc, abi, functionName: 'transfer', args: [to as Address, units], account: deployer, chain: wallet.chain });
    assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
  };
  onChain = async (address) => await client.readContract({ address: usdc, abi, functionName: 'balanceOf', args: [address as Address] }) as bigint;
  deployUsdt = async (kind = 'usdt') => {
    const usdt = await deployShapedToken(client as never, wallet, kind);
    const usdtAbi = shapedTokens[kind].abi;
    return {
      usdt, holder: deployer.address,
      fundUsdt: async (to, units) => {
        const hash = await wallet.writeContract({ address: usdt, abi: usdtAbi, functionName: 'transfer', args: [to as Address, units] as never, account: deployer, chain: wallet.chain });
        assert.equal((await client.waitForTransactionReceipt({ hash })).status, 'success');
      },
      usdtOf: async (address) => await client.readContract({ address: usdt, abi: usdtAbi, functionName: 'balanceOf', args: [address as Address] }) as bigint,
    };
  };
  store = await p.t.platform.payments.addStore({ tid: 'T-USDC1', name: 'Seoul Bakery' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  user = await newUser(p);
  await fund(user.address, usdcOf('50'));
});
after(async () => { await p?.stop(); });

/** The app connects, the POS starts a KRW payment naming `contract` (the QR code's token); both sessions. */
async function startBoth(exchangeAmount: string, contract: { contract_address: string; token_symbol: string }) {
  const uuid = randomUUID();
  const tran = `TR${randomUUID().slice(0, 8)}`;
  const app = openSession(p.client, 'DoPayment', user.token);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  await untilAppWaits(p, uuid);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  pos.send({ ...startPay(p, store.tid, tran, user, uuid, exchangeAmount), exchange_currency: 'KRW', ...contract });
  return { app, pos, tran };
}

test('USDC-like: allowed, priced by its own KRW notice (17 before it), paid over gRPC in its 6 decimals, refunded, rewarded and claimed; REST pay in it', async () => {
  const allowed = await tokenAllowCommand.run(context({ contract: usdc })) as any;
  assert.deepEqual([allowed.tokenSymbol, allowed.decimals, allowed.transferPath], ['USDC', 6, 'eip3009']);
  const named = { contract_address: usdc, token_symbol: 'USDC' };

  // VIXP's KRW notice does not price USDC: 17 on both streams, before the app is asked to pay.
  const unpriced = await startBoth('15000', named);
  const unpricedApp = await unpriced.app.next();
  assert.notEqual(unpricedApp.content.state, 'REQUEST_TRANSFER');
  assert.equal(unpricedApp.common.res_code, '17', JSON.stringify(unpricedApp.common));
  assert.equal(unpricedApp.common.res_message, `No exchange rate notice: no exchange-rate notice has been published for KRW in USDC (${usdc})`);
  assert.equal((await unpriced.pos.next()).common.res_code, '17');
  assert.equal(await onChain(user.address), usdcOf('50'));

  const notice = await ratePublishCommand.run(context({ currency: 'KRW', rate: '1380.25', contract: usdc })) as any;
  assert.deepEqual([notice.currency, notice.rate, notice.contractAddress, notice.tokenSymbol], ['KRW', '1380.25', usdc, 'USDC']);
  assert.match(notice.exchangeDateIndex, /^\d{8}00002$/, 'the day\'s second KRW notice, after VIXP\'s');

  // 15000 KRW at 1380.25 KRW per USDC = 10.867596449…: 10.867596 USDC, rounded down to its 6th decimal.
  const { app, pos, tran } = await startBoth('15000', named);
  const request = await app.next();
  assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
  assert.deepEqual(
    [request.content.contract_address, request.content.token_amount, request.content.exchange_rate, request.content.exchange_amount, request.content.exchange_date_index],
    [usdc, '10.867596', '1380.25', '15000', notice.exchangeDateIndex],
  );
  await pos.next();
  app.send(await transferFor(p, user, request));
  const end = await pos.next();
  assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
  assert.deepEqual([end.content.state, end.content.tran_no, end.content.contract_address, end.content.token_symbol, end.content.token_amount], ['END_PAY', tran, usdc, 'USDC', '10.867596']);
  assert.equal((await app.next()).common.res_code, '00');
  assert.equal(await onChain(user.address), 39_132_404n, 'payer down exactly 10.867596');
  assert.equal(await onChain(store.settlementAddress), 10_867_596n, 'store up exactly 10.867596');

  // CancelPayment: a part, then the rest; the balances back where they were.
  const cancel = (tokenAmount: string, tranNo: string) => unary(p.client, 'CancelPayment', store.apiKey, {
    tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, contract_address: usdc, token_symbol: 'USDC',
    user_address: user.address, token_amount: tokenAmount, exchange_amount: '15000', tran_no: tranNo,
  });
  const tooPrecise = await cancel('0.0000001', 'CX-0');
  assert.equal(tooPrecise.common.res_code, '11', 'USDC has 6 decimals');
  const part = await cancel('0.867596', 'CX-1');
  assert.equal(part.common.res_code, '00', JSON.stringify(part.common));
  assert.deepEqual([part.content.contract_address, part.content.token_symbol, part.content.token_amount], [usdc, 'USDC', '0.867596']);
  assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [40_000_000n, 10_000_000n]);
  const rest = await cancel('', 'CX-2');
  assert.equal(rest.common.res_code, '00', JSON.stringify(rest.common));
  assert.equal(rest.content.token_amount, '10');
  assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [50_000_000n, 0n]);
  assert.equal((await cancel('', 'CX-3')).common.res_code, '15');

  // A reward in USDC: 1380.25 KRW is 1 USDC, funded by the store's account, claimed from the receipt, then canceled.
  await fund(store.settlementAddress, usdcOf('3'));
  const issued = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '1380.25', contract_address: usdc });
  assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
  assert.deepEqual([issued.content.contract_address, issued.content.token_symbol, issued.content.token_amount, issued.content.exchange_rate], [usdc, 'USDC', '1', '1380.25']);
  const claim = openSession(p.client, 'DoPayment', user.token);
  claim.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: '1', token_symbol: 'USDC', user_address: user.address });
  const claimed = await claim.next();
  assert.equal(claimed.common.res_code, '00', JSON.stringify(claimed.common));
  assert.deepEqual([claimed.content.state, claimed.content.contract_address, claimed.content.token_amount], ['END_REWARD', usdc, '1']);
  assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [51_000_000n, 2_000_000n]);
  const taken = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: issued.content.reward_id, token_amount: '1' });
  assert.equal(taken.common.res_code, '00', JSON.stringify(taken.common));
  assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [50_000_000n, 3_000_000n]);
  const unpricedReward = await unary(p.client, 'IssueReward', store.apiKey, {
    tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '1', exchange_currency: 'USD', contract_address: usdc,
  });
  assert.equal(unpricedReward.common.res_code, '17', 'no USD notice for USDC');

  // REST pay in USDC: the user's custodial account to the receiving account, in its 6 decimals.
  const receiver = p.t.platform.config.payReceiverAddress ?? p.t.platform.relayer.address;
  const receiverBefore = await onChain(receiver);
  const login = await p.t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: user.userId, password: 'correct horse battery' } });
  const jwt = login.json().token as string;
  const payRequest = async (body: object) => {
    const response = await p.t.app.inject({ method: 'POST', url: '/v1/ict/pay', payload: body, headers: { 'content-type': 'application/json', authorization: `Bearer ${jwt}` } });
    return { status: response.statusCode, body: response.json() as any };
  };
  const tooFine = await payRequest({ tokenName: 'USDC', amount: '0.0000001', myAddress: user.address, password: 'correct horse battery' });
  assert.deepEqual([tooFine.status, tooFine.body.resultCode], [400, '400'], JSON.stringify(tooFine.body));
  const paid = await payRequest({ tokenName: 'USDC', amount: '2.345678', myAddress: user.address, password: 'correct horse battery' });
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.deepEqual([paid.body.resultData.tokenName, paid.body.resultData.amount, paid.body.resultData.status], ['USDC', '2.345678', 'confirmed']);
  assert.equal(await onChain(user.address), 47_654_322n);
  assert.equal(await onChain(receiver) - receiverBefore, 2_345_678n);
  const looked = await p.t.app.inject({ method: 'GET', url: `/v1/ict/pay/${paid.body.resultData.transactionId}`, headers: { authorization: `Bearer ${jwt}` } });
  assert.deepEqual([looked.json().resultData.tokenName, looked.json().resultData.amount, looked.json().resultData.status], ['USDC', '2.345678', 'confirmed']);

  // REST pay in a token without EIP-3009 (USDT-like, the account path), named by its symbol.
  const { usdt, holder, fundUsdt, usdtOf } = await deployUsdt();
  assert.equal((await tokenAllowCommand.run(context({ contract: usdt, holder })) as any).transferPath, 'account');
  await fundUsdt(user.address, 5_000_000n);
  const usdtReceiverBefore = await usdtOf(receiver);
  const inUsdt = await payRequest({ tokenName: 'USDT', amount: '1.5', myAddress: user.address, password: 'correct horse battery' });
  assert.equal(inUsdt.status, 200, JSON.stringify(inUsdt.body));
  assert.deepEqual([inUsdt.body.resultData.tokenName, inUsdt.body.resultData.amount], ['USDT', '1.5']);
  assert.deepEqual([await usdtOf(user.address), await usdtOf(receiver) - usdtReceiverBefore], [3_500_000n, 1_500_000n]);
});

// A reward in each token shape of the account path: 3000 KRW at 1380.25 KRW per token = 2.173519289983698605…,
// rounded down to the token's decimals.
for (const [kind, symbol, decimals, amount, tid] of [['usdt', 'USDT', 6, '2.173519', 'T-USDT1'], ['bep20', 'BSC-USD', 18, '2.173519289983698605', 'T-BEP1']] as const) {
  test(`${symbol} (the account path, ${decimals} decimals): a reward priced by its own KRW notice, issued, claimed from the receipt and canceled; each move exact on chain, the first of each account carrying its delegation`, async () => {
    const { usdt: token, holder, fundUsdt: fundToken, usdtOf: tokenOf } = await deployUsdt(kind);
    assert.equal((await tokenAllowCommand.run(context({ contract: token, holder })) as any).transferPath, 'account');
    const rewardStore = await p.t.platform.payments.addStore({ tid, name: 'Busan Tea House' });
    const payer = await newUser(p);
    const { client } = p.t.platform.chains[network()];
    const delegated = `0xef0100${p.t.platform.contracts[network()].account.slice(2).toLowerCase()}`;
    const units = (value: string) => parseUnits(value, decimals);
    const funded = units('5');
    const reward = units(amount);
    await fundToken(rewardStore.settlementAddress, funded);
    const issue = (exchangeAmount: string) => unary(p.client, 'IssueReward', rewardStore.apiKey, {
      tid: rewardStore.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: exchangeAmount, contract_address: token,
    });
    const balances = async () => [await tokenOf(rewardStore.settlementAddress), await tokenOf(payer.address)];

    // Allowed, not priced yet: the KRW notices of VIXP and USDC do not price it.
    assert.equal((await issue('1380.25')).common.res_code, '17');
    await ratePublishCommand.run(context({ currency: 'KRW', rate: '1380.25', contract: token }));
    const issued = await issue('3000');
    assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
    assert.deepEqual([issued.content.contract_address, issued.content.token_symbol, issued.content.token_amount, issued.content.exchange_rate], [token, symbol, amount, '1380.25']);
    assert.equal((await issue('13802.5')).common.res_code, '19', 'the store\'s 5 cannot fund 10');
    assert.deepEqual(await balances(), [funded, 0n], 'issuing moves nothing');

    const claim = openSession(p.client, 'DoPayment', payer.token);
    claim.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: amount, token_symbol: symbol, user_address: payer.address });
    const claimed = await claim.next();
    assert.equal(claimed.common.res_code, '00', JSON.stringify(claimed.common));
    assert.deepEqual([claimed.content.state, claimed.content.contract_address, claimed.content.token_amount], ['END_REWARD', token, amount]);
    assert.deepEqual(await balances(), [funded - reward, reward], `moved exactly ${amount} to the payer`);
    // END_REWARD names no transaction: its row does.
    const claimRow = await p.t.platform.store.db.selectFrom('authorizations').select('tx_hash').where('contract_address', '=', token).executeTakeFirstOrThrow();
    assert.equal((await client.getTransaction({ hash: claimRow.tx_hash as Address })).type, 'eip7702', 'the store account\'s first transfer carries its delegation');
    assert.equal(await client.getCode({ address: rewardStore.settlementAddress as Address }), delegated);
    const again = openSession(p.client, 'DoPayment', payer.token);
    again.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: amount, token_symbol: symbol, user_address: payer.address });
    assert.notEqual((await again.next()).common.res_code, '00', 'claimed once');
    assert.deepEqual(await balances(), [funded - reward, reward]);

    const taken = await unary(p.client, 'CancelReward', rewardStore.apiKey, { reward_id: issued.content.reward_id, token_amount: amount });
    assert.equal(taken.common.res_code, '00', JSON.stringify(taken.common));
    assert.deepEqual(await balances(), [funded, 0n], 'moved back exactly');
    assert.equal(await client.getCode({ address: payer.address as Address }), delegated, 'the payer\'s account delegated in its first transfer, the give-back');
    assert.notEqual((await unary(p.client, 'CancelReward', rewardStore.apiKey, { reward_id: issued.content.reward_id, token_amount: amount })).common.res_code, '00', 'canceled once');
    assert.deepEqual(await balances(), [funded, 0n]);
    const rows = await p.t.platform.store.db.selectFrom('authorizations').select(['from_address', 'nonce', 'status', 'value'])
      .where('contract_address', '=', token).orderBy('created_at').execute();
    assert.deepEqual(rows.map((r) => [r.from_address.toLowerCase(), r.nonce.slice(-3), r.status, r.value]),
      [[rewardStore.settlementAddress.toLowerCase(), '000', 'used', String(reward)], [payer.address.toLowerCase(), '000', 'used', String(reward)]]);
  });
}
