import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { call } from './support/platform.ts';
import { prepareTransfer, sha256Hex, type Wallet } from './support/transfer-scheme.ts';
import {
  newUser, openSession, startPay, startPaymentTest, transferFor, unary, untilAppWaits, type PaymentTest, type Session,
} from './support/payments.ts';
import { tokenAllowCommand, tokenAllowedCommand, tokenDisallowCommand } from '../src/cli/token-commands.ts';
import { createLogger } from '../src/shared/logger.ts';
import { cliDeps } from '../src/main.ts';
import { createPublicClient, createWalletClient, erc20Abi, getAddress, http, parseUnits, type Address } from 'viem';
import { dateOf } from '../src/statements/statement-day.ts';
import { addOperator } from '../src/console/operators.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';
import { vixpayAccountAbi } from '../src/gen/contracts/vixpay-account.ts';
import { mnemonicToAccount } from 'viem/accounts';
import { deployShapedToken, shapedTokens, type ShapedTokenKind } from './support/shaped-tokens.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../src/gen/contracts/ethr-did-registry.ts';

// Money safety (docs/reliability.md#the-guarantees): only the platform token of the payment network, or a token an operator
// allowed, settles a payment, a refund or a reward. A token a user made with createToken never does,
// whatever the QR code or the POS names; the refusal comes before the app is asked to pay.

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: 'T-ST01', name: 'Corner Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
});
after(async () => { await p?.stop(); });

const tranNo = () => `TR${randomUUID().slice(0, 8)}`;
const network = () => p.t.platform.config.paymentNetwork;

/** What a user does on the token API: createToken signed like a transfer (keyType createToken). */
async function createUserToken(owner: Wallet, name: string, symbol: string, initialSupply: string): Promise<string> {
  const { app } = p.t;
  const tempKey: string = (await call(app, '/token', 'net_getTempKey', { address: owner.address, keyType: 'createToken' })).resultData.tempKey;
  const hashKey = sha256Hex(`${tempKey}|${owner.secretKey}`);
  const data = sha256Hex(`${owner.address}|${name}|${symbol}|${initialSupply}|${tempKey}|${hashKey}`);
  const { signature } = (await call(app, '/token', 'signData', { address: owner.address, tempKey, hashKey, data, keyType: 'createToken' })).resultData;
  const created = await call(app, '/token', 'createToken', { address: owner.address, name, symbol, initialSupply, tempKey, hashKey, signature });
  assert.equal(created.resultCode, '200', JSON.stringify(created));
  return created.resultData.contractAddress as string;
}

async function balance(address: string, contractAddress?: string): Promise<string> {
  return (await p.t.platform.wallet.getBalance(network(), { address, ...(contractAddress && { contractAddress }) })).balance;
}

async function balances(addresses: string[], contracts: Array<string | undefined>): Promise<string[]> {
  const out: string[] = [];
  for (const address of addresses) for (const contract of contracts) out.push(await balance(address, contract));
  return out;
}

/**
 * The app connects, then the POS starts with `overrides` on the QR fields; answers both sessions.
 * The POS waits until the app is waiting, so it hears a refusal at once.
 */
async function startBoth(user: Wallet & { token: string }, overrides: Record<string, string>, tran = tranNo()): Promise<{ app: Session; pos: Session; tran: string }> {
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  await untilAppWaits(p, uuid);
  pos.send({ ...startPay(p, store.tid, tran, user, uuid, '15000'), ...overrides });
  return { app, pos, tran };
}

describe('a token a user made never settles a payment', () => {
  test('QR naming a user-made "VIXP Token" (symbol VIXP): POS and app get 18 before REQUEST_TRANSFER; nothing moves', async () => {
    const user = await newUser(p, '100');
    const fake = await createUserToken(user, 'VIXP Token', 'VIXP', '1000000');
    assert.notEqual(fake, p.t.platform.contracts[network()].vixpToken);
    const before = await balances([user.address, store.settlementAddress], [undefined, fake]);
    assert.deepEqual(before.slice(0, 2), ['100', '1000000']);

    const { app, pos, tran } = await startBoth(user, { contract_address: fake, token_symbol: 'VIXP' });
    const appMessage = await app.next();
    const posMessage = await pos.next();
    assert.notEqual(appMessage.content.state, 'REQUEST_TRANSFER', 'the app must never be asked to pay in that token');
    assert.equal(appMessage.common.res_code, '18', JSON.stringify(appMessage.common));
    assert.equal(posMessage.common.res_code, '18', JSON.stringify(posMessage.common));
    assert.match(posMessage.common.res_message, /^Token not accepted/);
    assert.equal(posMessage.content.tran_no, tran);
    await Promise.all([app.closed, pos.closed]);
    assert.deepEqual(await balances([user.address, store.settlementAddress], [undefined, fake]), before);

    const record = await p.t.platform.payments.findPayment(store.tid, tran);
    assert.notEqual(record?.status, 'approved');
    assert.equal(record?.failureCode, 'payment.token_not_accepted');
  });

  test('token_symbol alone naming a user-made token is refused the same way', async () => {
    const user = await newUser(p, '100');
    const fake = await createUserToken(user, 'Lucky Points', 'LUCKY', '5000');
    const { app, pos } = await startBoth(user, { contract_address: '', token_symbol: 'LUCKY' });
    const [appMessage, posMessage] = [await app.next(), await pos.next()];
    assert.notEqual(appMessage.content.state, 'REQUEST_TRANSFER');
    assert.equal(appMessage.common.res_code, '18');
    assert.equal(posMessage.common.res_code, '18');
    assert.deepEqual(await balances([user.address, store.settlementAddress], [undefined, fake]), ['100', '5000', '0', '0']);
  });

  test('CancelPayment naming a user-made contract is refused; nothing moves', async () => {
    const user = await newUser(p, '100');
    const fake = await createUserToken(user, 'VIXP Token', 'VIXP', '1000');
    const { app, pos } = await startBoth(user, {});
    const request = await app.next();
    assert.equal(request.content.state, 'REQUEST_TRANSFER');
    await pos.next();
    app.send(await transferFor(p, user, request));
    const end = await pos.next();
    assert.equal(end.common.res_code, '00');
    const txId = end.content.transfer_transaction_id;
    const before = await balances([user.address, store.settlementAddress], [undefined, fake]);
    const refused = await unary(p.client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: txId, user_address: user.address, contract_address: fake, token_symbol: 'VIXP', token_amount: '10',
    });
    assert.equal(refused.common.res_code, '18', JSON.stringify(refused.common));
    assert.deepEqual(await balances([user.address, store.settlementAddress], [undefined, fake]), before);
  });
});

describe('rewards move only a settlement token', () => {
  test('a claim naming a user-made contract is refused (18) at the POS and from a receipt; the reward stays claimable', async () => {
    await p.t.platform.wallet.mint(network(), { to: store.settlementAddress, amount: '10' });
    const user = await newUser(p);
    const fake = await createUserToken(user, 'VIXP Token', 'VIXP', '1000');
    const issued = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '1500' });
    assert.equal(issued.common.res_code, '00');
    assert.equal(issued.content.contract_address, p.t.platform.contracts[network()].vixpToken);
    const before = await balances([user.address, store.settlementAddress], [undefined, fake]);

    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await untilAppWaits(p, uuid);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send({
      state: 'START_REWARD', tid: store.tid, tran_no: 'RW-ST', reward_id: issued.content.reward_id, token_amount: '1',
      user_uuid: uuid, user_address: user.address, contract_address: fake,
    });
    for (const end of [await pos.next(), await app.next()]) assert.equal(end.common.res_code, '18', JSON.stringify(end.common));

    const receipt = openSession(p.client, 'DoPayment', user.token);
    receipt.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: '1', token_symbol: 'VIXP', contract_address: fake });
    assert.equal((await receipt.next()).common.res_code, '18');
    assert.deepEqual(await balances([user.address, store.settlementAddress], [undefined, fake]), before);

    const honest = openSession(p.client, 'DoPayment', user.token);
    honest.send({ state: 'START_REWARD', reward_id: issued.content.reward_id, token_amount: '1', token_symbol: 'VIXP' });
    assert.equal((await honest.next()).common.res_code, '00');
    assert.equal(await balance(user.address), '1');
  });
});

describe('operator allow-list', () => {
  test('`token allow` makes a second token acceptable: paid and refunded in it; `token disallow` refuses it again', async () => {
    const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
    const user = await newUser(p, '5');
    const points = await createUserToken(user, 'Store Points', 'PTS', '1000');
    const vixpBefore = await balances([user.address, store.settlementAddress], [undefined]);

    const refused = await startBoth(user, { contract_address: points, token_symbol: 'PTS' });
    assert.equal((await refused.app.next()).common.res_code, '18');
    assert.equal((await refused.pos.next()).common.res_code, '18');

    const allowed = await tokenAllowCommand.run(context({ contract: points })) as any;
    assert.equal(allowed.contractAddress, points);
    assert.equal(allowed.tokenSymbol, 'PTS');
    assert.equal(allowed.network, network());
    const listed = await tokenAllowedCommand.run(context({})) as any;
    assert.ok(listed.tokens.some((t: any) => t.contractAddress === points && t.tokenSymbol === 'PTS'), JSON.stringify(listed));

    // Allowed but not priced: VIXP's KRW notice does not price PTS (17, before the app is asked to pay).
    const unpriced = await startBoth(user, { contract_address: points, token_symbol: 'PTS' });
    const unpricedApp = await unpriced.app.next();
    assert.notEqual(unpricedApp.content.state, 'REQUEST_TRANSFER');
    assert.equal(unpricedApp.common.res_code, '17', JSON.stringify(unpricedApp.common));
    assert.equal((await unpriced.pos.next()).common.res_code, '17');
    await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500', contractAddress: points });

    const { app, pos } = await startBoth(user, { contract_address: points, token_symbol: 'PTS' });
    const request = await app.next();
    assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
    assert.equal(request.content.contract_address, points);
    assert.equal(request.content.token_amount, '10');
    await pos.next();
    app.send(await transferFor(p, user, request));
    const end = await pos.next();
    assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
    assert.equal(end.content.contract_address, points);
    assert.equal(end.content.token_symbol, 'PTS');
    assert.deepEqual(await balances([user.address, store.settlementAddress], [points]), ['990', '10']);

    const refund = await unary(p.client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, user_address: user.address,
      contract_address: points, token_symbol: 'PTS', token_amount: '4',
    });
    assert.equal(refund.common.res_code, '00', JSON.stringify(refund.common));
    assert.equal(refund.content.contract_address, points);
    assert.equal(refund.content.token_symbol, 'PTS');
    assert.deepEqual(await balances([user.address, store.settlementAddress], [points]), ['994', '6']);
    assert.deepEqual(await balances([user.address, store.settlementAddress], [undefined]), vixpBefore, 'VIXP untouched');

    const removed = await tokenDisallowCommand.run(context({ contract: points })) as any;
    assert.equal(removed.removed, true);
    const again = await startBoth(user, { contract_address: points, token_symbol: 'PTS' });
    const appAgain = await again.app.next();
    assert.notEqual(appAgain.content.state, 'REQUEST_TRANSFER');
    assert.equal(appAgain.common.res_code, '18');
    assert.equal((await again.pos.next()).common.res_code, '18');
    // A refund moves only an accepted token too: the operator allows it again to refund the rest.
    const late = await unary(p.client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, user_address: user.address, token_amount: '',
    });
    assert.equal(late.common.res_code, '18');
    assert.deepEqual(await balances([user.address, store.settlementAddress], [points]), ['994', '6']);
  });

  test('`token allow` refuses a contract the platform cannot move', async () => {
    const context = { config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values: { contract: `0x${'12'.repeat(20)}` }, positionals: [] };
    await assert.rejects(tokenAllowCommand.run(context), (error: any) => error.code === 'token.not_a_contract');
    await assert.rejects(tokenAllowCommand.run({ ...context, values: { contract: 'nope' } }), (error: any) => error.code === 'request.invalid');
  });

  test('`token allow` on tokens deployed outside the platform: USDC-like (EIP-3009, 6 decimals), USDT-like and BEP-20 (the account path); fee-on-transfer, rebasing, an EOA and a non-ERC-20 refused', async () => {
    const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
    const url = p.t.platform.chains[network()].url;
    const client = createPublicClient({ transport: http(url) });
    const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 7 });
    const wallet = createWalletClient({ account: deployer, chain: { ...p.t.platform.chains[network()].client.chain!, id: p.t.platform.chains[network()].chainId }, transport: http(url) });
    const deployed = {} as Record<ShapedTokenKind, Address>;
    for (const kind of ['usdc', 'usdt', 'bep20', 'fee', 'rebasing'] as const) deployed[kind] = await deployShapedToken(client as never, wallet, kind);

    const usdc = await tokenAllowCommand.run(context({ contract: deployed.usdc })) as any;
    assert.deepEqual(usdc, {
      network: network(), contractAddress: deployed.usdc, tokenSymbol: 'USDC', decimals: 6, eip3009: true, transferPath: 'eip3009', platformToken: false, allowedAt: usdc.allowedAt,
    });
    for (const [kind, symbol, decimals] of [['usdt', 'USDT', 6], ['bep20', 'BSC-USD', 18]] as const) {
      const allowed = await tokenAllowCommand.run(context({ contract: deployed[kind], holder: deployer.address })) as any;
      assert.deepEqual([allowed.tokenSymbol, allowed.decimals, allowed.eip3009, allowed.transferPath], [symbol, decimals, false, 'account']);
    }
    const listed = (await tokenAllowedCommand.run(context({ network: network() })) as any).tokens.map((t: any) => `${t.tokenSymbol}:${t.decimals}:${t.transferPath}`);
    assert.deepEqual(listed.slice(-3), ['USDC:6:eip3009', 'USDT:6:account', 'BSC-USD:18:account']);

    await assert.rejects(tokenAllowCommand.run(context({ contract: deployed.fee })), { code: 'token.fee_on_transfer' });
    await assert.rejects(tokenAllowCommand.run(context({ contract: deployed.rebasing })), { code: 'token.rebasing' });
    await assert.rejects(tokenAllowCommand.run(context({ contract: deployer.address })), { code: 'token.not_a_contract' });
    const { contractAddress: registry } = await client.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi: ethrDidRegistryAbi, bytecode: ethrDidRegistryBytecode }) });
    await assert.rejects(tokenAllowCommand.run(context({ contract: registry! })), { code: 'token.not_erc20' });
    await assert.rejects(tokenAllowCommand.run(context({ contract: deployed.fee, holder: 'nope' })), { code: 'request.invalid' });

  });
});

describe('tokens without EIP-3009 (the account path: EIP-7702)', () => {
  // A custodial payer pays a store in a token shaped like USDT (transfer answers nothing) or a
  // BEP-20 dollar, through the token API and through the payment flow, and the store refunds: each
  // account delegates to VixpayAccount in its first transfer's transaction, then moves the token with
  // its own signed transfer and its dense nonces (0, 1, 2…), the relayer paying the gas.
  for (const [kind, symbol, decimals, index] of [['usdt', 'USDT', 6, 8], ['bep20', 'BSC-USD', 18, 9]] as const) {
    test(`${symbol} (${decimals} decimals): token allow, a token-API transfer, a payment and its refund move exactly the amounts on chain`, async () => {
      const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
      const { url, chainId, client: platformClient } = p.t.platform.chains[network()];
      const client = createPublicClient({ transport: http(url) });
      const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: index });
      const wallet = createWalletClient({ account: deployer, chain: { ...platformClient.chain!, id: chainId }, transport: http(url) });
      const token = await deployShapedToken(client as never, wallet, kind);
      const allowed = await tokenAllowCommand.run(context({ contract: token, holder: deployer.address })) as any;
      assert.equal(allowed.transferPath, 'account');

      const units = (amount: string) => parseUnits(amount, decimals);
      const onChain = async (address: string) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
      const user = await newUser(p);
      const { contracts } = p.t.platform;
      await client.waitForTransactionReceipt({ hash: await wallet.writeContract({ address: token, abi: erc20Abi, functionName: 'transfer', args: [user.address as Address, units('25')], chain: wallet.chain, account: deployer }) });
      const storeBefore = await onChain(store.settlementAddress);
      assert.equal(await client.getCode({ address: user.address as Address }), undefined, 'not delegated before its first transfer');

      // The token API: 2.5 to the store.
      const prepared = await prepareTransfer(p.t.app, user, store.settlementAddress, '2.5');
      const { data: _signed, ...params } = prepared;
      const sent = await call(p.t.app, '/token', 'transfer', { ...params, contractAddress: token });
      assert.equal(sent.resultCode, '200', JSON.stringify(sent));
      assert.equal(sent.resultData.contractAddress, token);
      assert.equal(await client.getCode({ address: user.address as Address }), `0xef0100${contracts[network()].account.slice(2).toLowerCase()}`);
      const first = await client.getTransaction({ hash: sent.resultData.transactionId });
      assert.equal(first.type, 'eip7702', 'the first transfer carries the account\'s delegation');
      assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [units('22.5'), storeBefore + units('2.5')]);
      assert.equal(await client.getBalance({ address: user.address as Address }), 0n, 'the account holds no ether: the relayer pays');
      const status = await call(p.t.app, '/token', 'getTransferStatus', { transactionId: sent.resultData.transactionId, fromAddress: user.address });
      assert.deepEqual([status.resultData.status, status.resultData.authorization, status.resultData.amount, status.resultData.tokenSymbol], ['confirmed', 'used', '2.5', symbol]);

      // The payment flow: 15,000 KRW at 1,500 (the token's own notice) is 10 tokens.
      await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500', contractAddress: token });
      const { app, pos, tran } = await startBoth(user, { contract_address: token, token_symbol: symbol });
      const request = await app.next();
      assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
      assert.equal(request.content.token_amount, '10');
      await pos.next();
      app.send(await transferFor(p, user, request));
      const end = await pos.next();
      assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
      assert.equal(end.content.contract_address, token);
      assert.equal(end.content.token_symbol, symbol);
      assert.equal((await client.getTransaction({ hash: end.content.transfer_transaction_id })).type, 'eip1559', 'delegated already: nothing carried');
      assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [units('12.5'), storeBefore + units('12.5')]);

      // The refund: the store's account delegates in its first transfer.
      const refund = await unary(p.client, 'CancelPayment', store.apiKey, {
        tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, user_address: user.address,
        contract_address: token, token_symbol: symbol, token_amount: '4',
      });
      assert.equal(refund.common.res_code, '00', JSON.stringify(refund.common));
      assert.deepEqual([await onChain(user.address), await onChain(store.settlementAddress)], [units('16.5'), storeBefore + units('8.5')]);
      assert.equal(await balance(user.address, token), '16.5');

      // What the store reads of the payment and its refund, in the token's own symbol and decimals
      // (10, not 10 × 10^-12 as VIXP's 18 would make of USDT's 6): its statement lines and balances,
      // its webhook events, its receipts.
      const paidBlock = await client.getBlock({ blockNumber: (await client.getTransactionReceipt({ hash: end.content.transfer_transaction_id })).blockNumber });
      const day = dateOf(Number(paidBlock.timestamp) * 1000, p.t.config.timeZone);
      const statementAnswer = await p.t.app.inject({ method: 'GET', url: `/v1/stores/${store.tid}/statements/${day}`, headers: { authorization: `Bearer ${store.apiKey}` } });
      assert.equal(statementAnswer.statusCode, 200, statementAnswer.body);
      const statement = JSON.parse(statementAnswer.body);
      const lines = statement.lines.filter((l: { reference: string }) => l.reference === tran);
      assert.deepEqual(lines.map((l: any) => [l.kind, l.amount, l.token, getAddress(l.tokenContract)]), [['payment', '10', symbol, token], ['refund', '-4', symbol, token]]);
      const tokenBalance = statement.balances.find((b: { tokenContract: string }) => getAddress(b.tokenContract) === token);
      assert.equal(tokenBalance?.token, symbol, JSON.stringify(statement.balances));
      // The token-API transfer of 2.5 is no payment: listed unexplained, in USDT's units too.
      assert.deepEqual([tokenBalance.net, tokenBalance.unexplained, tokenBalance.difference], ['6', '2.5', '2.5'], JSON.stringify(tokenBalance));
      const events = await p.t.platform.store.db.selectFrom('webhook_events').select(['type', 'data']).where('tid', '=', store.tid).execute();
      const ofPayment = events.map((e) => ({ type: e.type, data: JSON.parse(e.data) })).filter((e) => e.data.tran_no === tran);
      assert.deepEqual(ofPayment.map((e) => [e.type, e.data.token_amount, e.data.token_symbol, getAddress(e.data.contract_address)]),
        [['payment.approved', '10', symbol, token], ['payment.canceled', '4', symbol, token]]);
      const receiptsAnswer = await p.t.app.inject({ method: 'GET', url: `/v1/receipts/${store.tid}/${tran}`, headers: { authorization: `Bearer ${store.apiKey}` } });
      assert.equal(receiptsAnswer.statusCode, 200, receiptsAnswer.body);
      const subjects = JSON.parse(receiptsAnswer.body).receipts.map((vc: { credentialSubject: Record<string, string> }) => vc.credentialSubject);
      assert.deepEqual(subjects.map((c: Record<string, string>) => [c.kind, c.amount, c.token, c.tokenContract]).sort(), [['payment', '10', symbol, token], ['cancellation', '4', symbol, token]].sort());
      // The console's search finds the payment with its amount in the token's units.
      const username = `op-${kind}`;
      await addOperator({ operators: createOperatorRepository(p.t.platform.store.db), passwords: createPasswordHasher(), clock: p.t.platform.clock }, { username, password: 'account path tokens 1234' });
      const login = await p.t.app.inject({ method: 'POST', url: '/console/login', payload: `username=${username}&password=account+path+tokens+1234`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      const cookie = String(login.headers['set-cookie']).split(';')[0]!;
      const found = JSON.parse((await p.t.app.inject({ method: 'GET', url: `/console/api/search?q=${tran}`, headers: { cookie } })).body);
      const rowsFound = (Array.isArray(found) ? found : found.rows ?? found.results ?? []) as Array<Record<string, unknown>>;
      assert.ok(rowsFound.some((r) => r.amount === '10' && r.tokenSymbol === symbol), JSON.stringify(found));

      // Dense nonces: the payer's 0 and 1 used on chain, 2 not; each one row, its key the primary key.
      const nonceUsed = (nonce: bigint) => client.readContract({ address: user.address as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });
      assert.deepEqual([await nonceUsed(0n), await nonceUsed(1n), await nonceUsed(2n)], [true, true, false]);
      const rows = await p.t.platform.store.db.selectFrom('authorizations').select(['nonce', 'status']).where('from_address', '=', user.address).orderBy('nonce').execute();
      assert.deepEqual(rows.map((r) => [r.nonce.slice(-3), r.status]), [['000', 'used'], ['001', 'used']]);
    });
  }

  test('USDT: a transfer the token refuses (the payer blacklisted) is not answered settled; its nonce is cancelled at the account, nothing moved; the next one settles with the next nonce', async () => {
    const context = (values: Record<string, string>) => ({ config: p.t.config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] });
    const { url, chainId, client: platformClient } = p.t.platform.chains[network()];
    const client = createPublicClient({ transport: http(url) });
    const deployer = mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex: 8 });
    const wallet = createWalletClient({ account: deployer, chain: { ...platformClient.chain!, id: chainId }, transport: http(url) });
    const token = await deployShapedToken(client as never, wallet, 'usdt');
    await tokenAllowCommand.run(context({ contract: token, holder: deployer.address }));
    const asOwner = async (functionName: 'transfer' | 'addBlackList' | 'removeBlackList', args: readonly unknown[]) => client.waitForTransactionReceipt({
      hash: await wallet.writeContract({ address: token, abi: shapedTokens.usdt.abi, functionName, args: args as never, chain: wallet.chain, account: deployer }),
    });
    const onChain = async (address: string) => client.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [address as Address] });
    const user = await newUser(p);
    await asOwner('transfer', [user.address, 5_000_000n]);
    await asOwner('addBlackList', [user.address]);
    const pay = async (amount: string) => {
      const { data: _signed, ...params } = await prepareTransfer(p.t.app, user, store.settlementAddress, amount);
      return call(p.t.app, '/token', 'transfer', { ...params, contractAddress: token });
    };

    const refused = await pay('1');
    assert.notEqual(refused.resultCode, '200', JSON.stringify(refused));
    assert.equal(await onChain(user.address), 5_000_000n);
    const nonceUsed = (nonce: bigint) => client.readContract({ address: user.address as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });
    assert.equal(await nonceUsed(0n), true, 'used up by its cancellation: the signed transfer can never execute');
    const cancelled = await client.getContractEvents({ address: user.address as Address, abi: vixpayAccountAbi, eventName: 'NonceCancelled', fromBlock: 0n });
    assert.deepEqual(cancelled.map((log) => log.args.nonce), [0n]);

    await asOwner('removeBlackList', [user.address]);
    const settled = await pay('1.25');
    assert.equal(settled.resultCode, '200', JSON.stringify(settled));
    assert.equal(await onChain(user.address), 3_750_000n);
    const rows = await p.t.platform.store.db.selectFrom('authorizations').select(['nonce', 'status']).where('from_address', '=', user.address).orderBy('nonce').execute();
    assert.deepEqual(rows.map((r) => [r.nonce.slice(-3), r.status]), [['000', 'canceled'], ['001', 'used']]);
  });
});
