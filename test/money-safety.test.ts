import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { encodeFunctionData, hexToBigInt, isAddressEqual, parseEventLogs, parseUnits, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createLogger } from '../src/shared/logger.ts';
import { startPaymentServer } from '../src/main.ts';
import type { GrpcServer } from '../src/transports/grpc/grpc-server.ts';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { vixpayAccountAbi } from '../src/gen/contracts/vixpay-account.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { vixpName } from '../src/chain/platform-contracts.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { newUser, openSession, paymentsClient, testPairing, testStore, unary } from './support/payments.ts';
import { deleteKeys, testRedisUrl, uniquePrefix } from './support/redis.ts';
import { freshPostgresSchema } from './support/store-factories.ts';
import { anvilControls, minedTransactions, replayAsStranger, strangerWallet, tokenLedger } from './support/chain-audit.ts';
import { waitFor } from './support/wait-for.ts';

// Everything here runs on the real parts: anvil, the VIXP contract, SQLite, the JSON-RPC and gRPC
// servers. Every line the platform logs, at trace level, is kept and scanned at the end.
let logs = '';
const sink = new Writable({ write(chunk, _encoding, done) { logs += chunk.toString(); done(); } });
let t: TestPlatform;
let server: GrpcServer;
let client: ReturnType<typeof paymentsClient>;
const secrets: string[] = [];

const redisKeyPrefix = uniquePrefix('money-safety');
let postgres: Awaited<ReturnType<typeof freshPostgresSchema>> | undefined;

// On SQLite and the in-process desk by default; VIXPAY_TEST_STORE=postgres and VIXPAY_TEST_PAIRING=redis
// (npm run test:matrix) run the same on PostgreSQL, where the reservation's row lock, not SQLite's
// single writer, decides the races, and on the Redis pairing desk.
before(async () => {
  postgres = testStore() === 'postgres' ? await freshPostgresSchema('vixpay_ms') : undefined;
  t = await startTestPlatform({
    logger: createLogger('trace', sink),
    redisKeyPrefix,
    env: {
      RECEIPT_TIMEOUT_SECONDS: '2', ...(postgres && { DATABASE_URL: postgres.databaseUrl }),
      // 50 streams of one user or one POS at once: the duplicate-operation tests, not the stream cap.
      GRPC_MAX_STREAMS_PER_CLIENT: '200',
      ...(testPairing() === 'redis' && { REDIS_URL: testRedisUrl }),
    },
  });
  assert.equal(t.platform.store.dialect, testStore());
  server = await startPaymentServer(t.platform, t.platform, { port: 0, host: '127.0.0.1' });
  client = paymentsClient(server.port);
  await t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => {
  client?.close();
  await server?.stop(1000);
  await t?.stop();
  await postgres?.drop();
  if (testPairing() === 'redis') await deleteKeys(redisKeyPrefix);
});

const chain = () => t.platform.chains.ethereum;
const vixp = () => t.platform.contracts.ethereum.vixpToken;
const units = (amount: string) => parseUnits(amount, 18);
const balance = async (address: string) => chain().client.readContract({ address: vixp(), abi: vixpTokenAbi, functionName: 'balanceOf', args: [address as Address] });
/** Transactions sent by every relayer lane. */
const relayerTxCount = async () => {
  const counts = await Promise.all(t.platform.relayer.lanes.map((address) => chain().client.getTransactionCount({ address })));
  return counts.reduce((a, b) => a + b, 0);
};

async function fundedWallet(amount: string): Promise<Wallet> {
  const wallet = (await call(t.app, '/token', 'createAddress', {})).resultData as Wallet;
  secrets.push(wallet.secretKey, wallet.mnemonic ?? '');
  if (amount !== '0') await t.platform.wallet.mint('ethereum', { to: wallet.address, amount });
  return wallet;
}

async function signedTransfer(from: Wallet, to: string, amount: string) {
  const { data: _data, ...prepared } = await prepareTransfer(t.app, from, to, amount);
  secrets.push(prepared.tempKey, prepared.hashKey, prepared.signature);
  return prepared;
}

/** Re-sends, as a stranger, every transaction mined since `fromBlock`; answers how many moved anything. */
async function replayEverythingSince(fromBlock: bigint): Promise<number> {
  const mined = await minedTransactions(chain().client, fromBlock);
  for (const tx of mined) secrets.push(tx.input);
  return replayAsStranger(chain(), mined);
}

async function assertConserved() {
  const ledger = await tokenLedger(chain().client, vixp());
  assert.equal(ledger.sumOfBalances, ledger.totalSupply, 'the sum of all balances is the total supply');
  assert.equal(ledger.totalSupply, ledger.minted, 'the total supply is what was minted');
}

describe('racing transfers from one account', () => {
  test('40 concurrent 1-VIXP transfers from an account holding 10: exactly 10 succeed, 30 are refused without a transaction, and no mined calldata moves anything again', async () => {
    const sender = await fundedWallet('10');
    const receiver = await fundedWallet('0');
    const prepared = await Promise.all(Array.from({ length: 40 }, () => signedTransfer(sender, receiver.address, '1')));
    const fromBlock = (await chain().client.getBlockNumber()) + 1n;
    const sentBefore = await relayerTxCount();

    const answers = await Promise.all(prepared.map((p) => call(t.app, '/token', 'transfer', p)));
    const codes = answers.map((a) => a.resultCode as string);
    assert.equal(codes.filter((c) => c === '200').length, 10, `answers: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === '402').length, 30, `answers: ${codes.join(',')}`);
    const sent = await relayerTxCount() - sentBefore;
    assert.ok(sent >= 1 && sent <= 10, `the relayer sent the accepted transfers in 1 to 10 settlement transactions (${sent})`);
    const carried = await journaledTransfers(sender.address);
    assert.deepEqual(carried.map((row) => row.authorization), Array(10).fill('used'), 'they carried the 10 accepted transfers and none of the refused');
    assert.equal(await balance(sender.address), 0n);
    assert.equal(await balance(receiver.address), units('10'));

    // The refused ones never got a signature; the accepted ones are spent. Top the sender up and
    // re-send every mined transaction's calldata as a stranger: nothing moves.
    await t.platform.wallet.mint('ethereum', { to: sender.address, amount: '100' });
    assert.equal(await replayEverythingSince(fromBlock), 0, 'no re-sent transaction succeeded');
    assert.equal(await balance(sender.address), units('100'));
    assert.equal(await balance(receiver.address), units('10'));
    await assertConserved();
  });

  test('the same signed transfer sent 50 times at once moves the amount once', async () => {
    const sender = await fundedWallet('10');
    const receiver = await fundedWallet('0');
    const prepared = await signedTransfer(sender, receiver.address, '2');
    const answers = await Promise.all(Array.from({ length: 50 }, () => call(t.app, '/token', 'transfer', prepared)));
    const codes = answers.map((a) => a.resultCode as string);
    assert.equal(codes.filter((c) => c === '200').length, 1, `answers: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === '440').length, 49, `answers: ${codes.join(',')}`);
    assert.equal(await balance(receiver.address), units('2'));
    assert.equal(await balance(sender.address), units('8'));
  });
});

describe('rewards claimed at once from a store that cannot fund them all', () => {
  test('four rewards of 3 from a store holding 5: one is paid, three are refused without a transaction; after a top-up they are paid once each, and re-sending every mined transaction pays nothing more', async () => {
    const store = await t.platform.payments.addStore({ tid: `MS-${randomUUID().slice(0, 8)}`, name: 'Race Shop' });
    secrets.push(store.apiKey);
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '5' });
    const user = await payer('0');
    const { token } = user;
    const rewards = [];
    for (let i = 0; i < 4; i++) rewards.push(await t.platform.rewards.issueReward(store, { tid: store.tid, rewardReason: `race-${i}-${randomUUID()}`, exchangeAmount: '3000' }));
    const fromBlock = (await chain().client.getBlockNumber()) + 1n;

    const claim = async (rewardId: string) => {
      const app = openSession(client, 'DoPayment', token);
      app.send({ state: 'START_REWARD', reward_id: rewardId, token_amount: '3', token_symbol: 'VIXP', user_address: user.address });
      const answer = await app.next();
      await app.closed;
      return answer.common.res_code as string;
    };
    const first = await Promise.all(rewards.map((r) => claim(r.rewardId)));
    assert.equal(first.filter((c) => c === '00').length, 1, `claims: ${first.join(',')}`);
    assert.equal(await balance(user.address), units('3'));
    assert.equal(await balance(store.settlementAddress), units('2'));

    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100' });
    const unpaid = rewards.filter((_, i) => first[i] !== '00');
    const second = await Promise.all(unpaid.map((r) => claim(r.rewardId)));
    assert.deepEqual(second, ['00', '00', '00']);
    assert.equal(await balance(user.address), units('12'));

    assert.equal(await replayEverythingSince(fromBlock), 0, 'no re-sent transaction succeeded');
    assert.equal(await balance(user.address), units('12'), 'the user got exactly the four rewards');
    assert.equal(await balance(store.settlementAddress), units('93'));
    await assertConserved();
  });
});

/**
 * The holder's funds leave by a path the platform did not reserve (here: an EIP-3009 transfer the
 * test signs with the custodial key and a stranger submits with a higher tip), mined in the same
 * block before the platform's transaction, so that one is mined and reverts.
 */
async function drainAhead(holder: Address, amount: bigint) {
  const stored = await t.platform.store.db.selectFrom('accounts').select('private_key_enc').where('address', '=', holder).executeTakeFirstOrThrow();
  const key = privateKeyToAccount(t.platform.vault.decrypt(stored.private_key_enc) as Hex);
  const nonce = `0x${randomUUID().replaceAll('-', '').padEnd(64, '0')}` as Hex;
  const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3600);
  const sink = privateKeyToAccount(generatePrivateKey()).address;
  const signature = await key.signTypedData({
    domain: { name: vixpName, version: '1', chainId: chain().chainId, verifyingContract: vixp() },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
    message: { from: holder, to: sink, value: amount, validAfter: 0n, validBefore, nonce },
  });
  const wallet = await strangerWallet(chain(), '10');
  await wallet.sendTransaction({
    chain: null, to: vixp(), gas: 200_000n, maxFeePerGas: parseUnits('500', 9), maxPriorityFeePerGas: parseUnits('400', 9),
    data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transferWithAuthorization', args: [holder, sink, amount, 0n, validBefore, nonce, signature] }),
  });
  return sink;
}

/** The settlement transactions journaled for `from`'s transfers, one row per transfer (its authorization). */
const journaledTransfers = (from: string) => t.platform.store.db.selectFrom('authorizations as a')
  .innerJoin('chain_txs as c', 'c.tx_hash', 'a.tx_hash')
  .select(['c.tx_hash', 'c.status', 'a.nonce', 'a.status as authorization'])
  .where('c.kind', '=', 'settlement').where('a.from_address', '=', from).execute();

describe('a transfer whose transaction is mined and reverts', () => {
  test('answers failed only after its authorization is cancelled on chain; re-sending the reverted calldata after a top-up moves nothing', async () => {
    const sender = await fundedWallet('10');
    const receiver = await fundedWallet('0');
    const prepared = await signedTransfer(sender, receiver.address, '6');
    const anvil = anvilControls(chain());
    await anvil.setAutomine(false);
    let answer: Promise<any>;
    try {
      answer = call(t.app, '/token', 'transfer', prepared);
      await waitFor(async () => (await journaledTransfers(sender.address)).length === 1, { timeoutMs: 20_000, message: 'the transfer was journaled' });
      await drainAhead(sender.address as Address, units('10'));
      await anvil.mine({ blocks: 1 });
    } finally {
      await anvil.setAutomine(true);
    }
    const result = await answer;
    assert.equal(result.resultCode, '502', JSON.stringify(result));
    const [journaled] = await journaledTransfers(sender.address);
    const receipt = await chain().client.getTransactionReceipt({ hash: journaled!.tx_hash as Hex });
    // A batch of one is the account's own `signedTransfer` (src/chain/account-settlement.ts; the account path,
    // every custodial transfer on a network with EIP-7702): it reverts where a batch would skip the item
    // (ItemSkipped), its delegation applied all the same.
    assert.ok(receipt.to && isAddressEqual(receipt.to, sender.address as Address), 'the transfer alone was sent to the account itself');
    assert.equal(receipt.status, 'reverted', 'the platform\'s transaction was mined and did not execute the transfer');
    assert.equal(parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs }).length, 0, 'nothing moved in it');
    const authorization = await t.platform.store.db.selectFrom('authorizations').selectAll().where('tx_hash', '=', journaled!.tx_hash).executeTakeFirstOrThrow();
    assert.equal(authorization.status, 'canceled');
    assert.ok(authorization.cancel_tx_hash, 'a cancelNonce transaction was mined');
    const canceled = await chain().client.readContract({
      address: sender.address as Address, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [hexToBigInt(authorization.chain_nonce as Hex)],
    });
    assert.equal(canceled, true, 'the nonce is spent on chain');

    await t.platform.wallet.mint('ethereum', { to: sender.address, amount: '50' });
    const tx = await chain().client.getTransaction({ hash: journaled!.tx_hash as Hex });
    secrets.push(tx.input);
    assert.equal(await replayAsStranger(chain(), [{ to: tx.to, input: tx.input }]), 0, 'the reverted calldata stays dead');
    assert.equal(await balance(sender.address), units('50'));
    assert.equal(await balance(receiver.address), 0n);
    await assertConserved();
  });
});

/** A user with a wallet and a JWT, and `tokens` VIXP. */
async function payer(tokens: string) {
  const user = await newUser({ t }, tokens === '0' ? undefined : tokens);
  secrets.push(user.token, user.secretKey, user.mnemonic ?? '');
  return user;
}

/**
 * A payment up to REQUEST_TRANSFER (the app contract-literal: START_PAY with only state, paired by its
 * user id; or with a one-time user_uuid of its own). `sendTransfer()` sends the app's TRANSFER,
 * `answers()` awaits both ends' last message, `transfer()` does both.
 */
async function payUntilRequest(
  store: { tid: string; apiKey: string }, user: Awaited<ReturnType<typeof payer>>, exchangeAmount: string, options: { specLiteral?: boolean } = {},
) {
  const uuid = options.specLiteral ? user.userId : randomUUID();
  const tranNo = `T-${randomUUID().slice(0, 8)}`;
  const app = openSession(client, 'DoPayment', user.token);
  app.send(options.specLiteral ? { state: 'START_PAY' } : { state: 'START_PAY', user_uuid: uuid });
  const pos = openSession(client, 'StartPayment', store.apiKey);
  pos.send({
    state: 'START_PAY', tid: store.tid, tran_no: tranNo, exchange_amount: exchangeAmount, user_uuid: uuid, contract_address: vixp(),
    token_symbol: 'VIXP', user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
  });
  const request = await app.next();
  assert.equal(request.content.state, 'REQUEST_TRANSFER', JSON.stringify(request.common));
  assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
  const prepared = await prepareTransfer(t.app, user, request.content.settlement_address, request.content.token_amount);
  secrets.push(prepared.tempKey, prepared.hashKey, prepared.signature);
  const sendTransfer = () => app.send({
    state: 'TRANSFER', tran_no: tranNo, transfer_key: prepared.tempKey, hash_key: prepared.hashKey, transfer_signature: prepared.signature,
  });
  const answers = async () => {
    const [posEnd, appEnd] = await Promise.all([pos.next(60_000), app.next(60_000)]);
    return { posEnd, appEnd };
  };
  return {
    tranNo, request, sendTransfer, answers,
    async transfer() {
      sendTransfer();
      return answers();
    },
  };
}

describe('a payment whose transfer is mined and reverts', () => {
  test('is payment 04 "Token API error" on both streams, after its authorization is cancelled; nothing moves', async () => {
    const store = await t.platform.payments.addStore({ tid: `MR-${randomUUID().slice(0, 8)}`, name: 'Revert Shop' });
    secrets.push(store.apiKey);
    const user = await payer('20');
    const payment = await payUntilRequest(store, user, '5000', { specLiteral: true });
    const anvil = anvilControls(chain());
    await anvil.setAutomine(false);
    try {
      payment.sendTransfer();
      await waitFor(async () => (await journaledTransfers(user.address)).length === 1, { timeoutMs: 20_000, message: 'the transfer was journaled' });
      await drainAhead(user.address as Address, units('20'));
      await anvil.mine({ blocks: 1 });
    } finally {
      await anvil.setAutomine(true);
    }
    const { posEnd, appEnd } = await payment.answers();
    for (const answer of [posEnd, appEnd]) {
      assert.equal(answer.common.res_code, '04', JSON.stringify(answer.common));
      assert.equal(answer.common.res_message, 'Token API error');
      assert.equal(answer.content.state, 'END_PAY');
      assert.equal(answer.content.approval_no ?? '', '');
    }
    assert.equal((await t.platform.payments.findPayment(store.tid, payment.tranNo))?.status, 'failed');
    assert.equal(await balance(store.settlementAddress), 0n);
    await assertConserved();
  });
});

describe('an operation whose transfer a lookup found none of (the stale sweeps decide on it)', () => {
  test('is void from then on: a transfer asked for under its reference after is refused and moves nothing; one not looked up moves', async () => {
    const user = await payer('5');
    const to = (await payer('0')).address;
    const reference = `payment-cancel:${randomUUID()}`;
    assert.deepEqual(await t.platform.wallet.transferOutcome('ethereum', reference), { status: 'void' });
    const late = await t.platform.wallet.transferFromCustody('ethereum', { fromAddress: user.address, toAddress: to, amount: '1', reference });
    assert.deepEqual([late.status, late.status === 'refused' && late.error.code], ['refused', 'request.invalid']);
    assert.deepEqual(await t.platform.wallet.transferOutcome('ethereum', reference), { status: 'void' }, 'still void');
    const other = `payment-cancel:${randomUUID()}`;
    const moved = await t.platform.wallet.transferFromCustody('ethereum', { fromAddress: user.address, toAddress: to, amount: '1', reference: other });
    assert.equal(moved.status, 'settled');
    assert.deepEqual(await t.platform.wallet.transferOutcome('ethereum', other), { status: 'used', txHash: moved.status === 'settled' && moved.transactionId });
    assert.deepEqual([await balance(user.address), await balance(to)], [units('4'), units('1')]);
    await assertConserved();
  });
});

describe('a payment whose transfer the chain does not mine within the wait', () => {
  test('is never approved while unconfirmed: the POS gets 10, the payment stays pending, and the transfer happens at most once', async () => {
    const store = await t.platform.payments.addStore({ tid: `MT-${randomUUID().slice(0, 8)}`, name: 'Slow Chain Shop' });
    secrets.push(store.apiKey);
    const user = await payer('20');
    const payment = await payUntilRequest(store, user, '5000');
    const anvil = anvilControls(chain());
    await anvil.setAutomine(false);
    let answers: { posEnd: any; appEnd: any };
    try {
      answers = await payment.transfer();
    } finally {
      await anvil.setAutomine(true);
    }
    assert.equal(answers.posEnd.common.res_code, '10', JSON.stringify(answers.posEnd.common));
    assert.equal(answers.posEnd.content.approval_no ?? '', '', 'no approval number');
    assert.equal(answers.appEnd.common.res_code, '10', JSON.stringify(answers.appEnd.common));
    const record = await t.platform.payments.findPayment(store.tid, payment.tranNo);
    assert.equal(record?.status, 'pending', 'no approval while the transfer is unconfirmed');
    assert.equal(record?.approvalNo ?? null, null);

    // Once the chain mines again the transfer (sent first) executes and the cancellation behind it
    // reverts: the payment's transfer happened exactly once, and the platform says so.
    await anvil.mine({ blocks: 1 });
    const outcome = await waitFor(async () => {
      const o = await t.platform.wallet.transferOutcome('ethereum', `payment:${record!.id}`);
      return o.status === 'open' ? undefined : o;
    }, { timeoutMs: 20_000, message: 'the transfer settled on chain' });
    assert.equal(outcome.status, 'used');
    assert.equal(await balance(store.settlementAddress), units('5'));
    assert.equal(await balance(user.address), units('15'));
    await assertConserved();
  });
});

/**
 * Runs `during` with the chain not mining (every transfer sent meanwhile waits past
 * RECEIPT_TIMEOUT_SECONDS, answered "not settled yet"), then mines once and waits until `settled`.
 */
async function withUnminedChain(during: () => Promise<void>, settled: () => Promise<boolean>) {
  const anvil = anvilControls(chain());
  await anvil.setAutomine(false);
  try {
    await during();
  } finally {
    await anvil.setAutomine(true);
  }
  await anvil.mine({ blocks: 1 });
  await waitFor(settled, { timeoutMs: 30_000, message: 'the transfers sent while the chain did not mine settled' });
}

/** The app's claim of a reward (DoPayment START_REWARD): its END_REWARD's res_code. */
async function claimRewardCode(user: { token: string; address: string }, rewardId: string, tokenAmount: string) {
  const app = openSession(client, 'DoPayment', user.token);
  app.send({ state: 'START_REWARD', reward_id: rewardId, token_amount: tokenAmount, token_symbol: 'VIXP', user_address: user.address });
  const answer = await app.next(60_000);
  await app.closed;
  return answer.common.res_code as string;
}

describe('a refund, a reward payout and a reward give-back the chain does not mine within the wait', () => {
  test('a refund sent but not mined keeps its amount reserved: a second full cancellation is refused, and the payer is refunded once', async () => {
    const store = await t.platform.payments.addStore({ tid: `MF-${randomUUID().slice(0, 8)}`, name: 'Slow Refund Shop' });
    secrets.push(store.apiKey);
    // More than the payment on the store's account: a second refund could be paid.
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '20' });
    const user = await payer('10');
    const { posEnd } = await (await payUntilRequest(store, user, '5000')).transfer();
    assert.equal(posEnd.common.res_code, '00', JSON.stringify(posEnd.common));
    const cancel = () => unary(client, 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: posEnd.content.transfer_transaction_id, token_amount: '' });
    const answers: string[] = [];
    await withUnminedChain(async () => {
      answers.push((await cancel()).common.res_code);
      const payment = await t.platform.payments.findPayment(store.tid, (await t.platform.store.db.selectFrom('payments').select('tran_no')
        .where('transfer_transaction_id', '=', posEnd.content.transfer_transaction_id).executeTakeFirstOrThrow()).tran_no);
      assert.equal(payment?.refundedAmount, units('5').toString(), 'the unsettled refund stays reserved');
      answers.push((await cancel()).common.res_code);
    }, async () => (await balance(user.address)) === units('10'));
    assert.notEqual(answers[0], '00', 'the refund was not settled when answered');
    assert.notEqual(answers[1], '00', `a second cancellation while the first is unsettled refunds nothing (${answers.join(',')})`);
    assert.equal(await balance(user.address), units('10'), 'refunded once');
    assert.equal(await balance(store.settlementAddress), units('20'));
    await assertConserved();
  });

  test('a reward payout sent but not mined keeps the reward claiming: a second claimer is refused, and the reward is paid once', async () => {
    const store = await t.platform.payments.addStore({ tid: `MG-${randomUUID().slice(0, 8)}`, name: 'Slow Reward Shop' });
    secrets.push(store.apiKey);
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '20' });
    const reward = await t.platform.rewards.issueReward(store, { tid: store.tid, rewardReason: `slow-${randomUUID()}`, exchangeAmount: '3000' });
    const [first, second] = await Promise.all([payer('0'), payer('0')]);
    const answers: string[] = [];
    await withUnminedChain(async () => {
      answers.push(await claimRewardCode(first, reward.rewardId, '3'));
      const row = await t.platform.store.db.selectFrom('rewards').select('status').where('id', '=', reward.rewardId).executeTakeFirstOrThrow();
      assert.equal(row.status, 'claiming', 'the unsettled payout keeps the reward claiming');
      answers.push(await claimRewardCode(second, reward.rewardId, '3'));
    }, async () => (await balance(first.address)) === units('3'));
    assert.notEqual(answers[0], '00', 'the payout was not settled when answered');
    assert.notEqual(answers[1], '00', `a second claim while the payout is unsettled is refused (${answers.join(',')})`);
    assert.equal(await balance(second.address), 0n, 'the reward was paid once');
    assert.equal(await balance(store.settlementAddress), units('17'));
    await assertConserved();
  });

  test('a reward give-back sent but not mined keeps the reward canceling: a second CancelReward answers 13, and it is given back once', async () => {
    const store = await t.platform.payments.addStore({ tid: `MH-${randomUUID().slice(0, 8)}`, name: 'Slow Give-back Shop' });
    secrets.push(store.apiKey);
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '20' });
    const reward = await t.platform.rewards.issueReward(store, { tid: store.tid, rewardReason: `slow-back-${randomUUID()}`, exchangeAmount: '3000' });
    // The claimer holds more than the reward: a second give-back could be taken.
    const claimer = await payer('10');
    assert.equal(await claimRewardCode(claimer, reward.rewardId, '3'), '00');
    assert.equal(await balance(claimer.address), units('13'));
    const cancel = () => unary(client, 'CancelReward', store.apiKey, { reward_id: reward.rewardId, token_amount: '3' });
    const answers: string[] = [];
    await withUnminedChain(async () => {
      answers.push((await cancel()).common.res_code);
      const row = await t.platform.store.db.selectFrom('rewards').select('status').where('id', '=', reward.rewardId).executeTakeFirstOrThrow();
      assert.equal(row.status, 'canceling', 'the unsettled give-back keeps the reward canceling');
      answers.push((await cancel()).common.res_code);
    }, async () => (await balance(claimer.address)) === units('10'));
    assert.notEqual(answers[0], '00', 'the give-back was not settled when answered');
    assert.equal(answers[1], '13', `a second CancelReward while the give-back is unsettled is in progress (${answers.join(',')})`);
    assert.equal(await balance(claimer.address), units('10'), 'given back once');
    assert.equal(await balance(store.settlementAddress), units('20'));
    await assertConserved();
  });

  test('ten partial cancellations of 1 racing for a payment of 6: six refund, four are refused, the payer gets back exactly what was paid', async () => {
    const store = await t.platform.payments.addStore({ tid: `MI-${randomUUID().slice(0, 8)}`, name: 'Racing Refund Shop' });
    secrets.push(store.apiKey);
    // More than the payment on the store's account: an excess refund could be paid.
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '20' });
    const user = await payer('10');
    const { posEnd } = await (await payUntilRequest(store, user, '6000')).transfer();
    assert.equal(posEnd.common.res_code, '00', JSON.stringify(posEnd.common));
    const answers = await Promise.all(Array.from({ length: 10 }, () => unary(client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: posEnd.content.transfer_transaction_id, token_amount: '1',
    })));
    const codes = answers.map((a: any) => a.common.res_code as string);
    assert.equal(codes.filter((c) => c === '00').length, 6, `cancellations: ${codes.join(',')}`);
    assert.equal(await balance(user.address), units('10'), 'the 6 paid came back, no more');
    assert.equal(await balance(store.settlementAddress), units('20'));
    const payment = await t.platform.payments.findPayment(store.tid, (await t.platform.store.db.selectFrom('payments').select('tran_no')
      .where('transfer_transaction_id', '=', posEnd.content.transfer_transaction_id).executeTakeFirstOrThrow()).tran_no);
    assert.equal(payment?.refundedAmount, units('6').toString());
    await assertConserved();
  });
});

describe('a balance that drops between REQUEST_TRANSFER and TRANSFER', () => {
  test('the TRANSFER is refused with 02 and nothing moves: no transaction is sent', async () => {
    const store = await t.platform.payments.addStore({ tid: `MB-${randomUUID().slice(0, 8)}`, name: 'Drop Shop' });
    secrets.push(store.apiKey);
    const user = await payer('10');
    const elsewhere = await fundedWallet('0');
    const payment = await payUntilRequest(store, user, '8000');
    assert.equal(payment.request.content.token_amount, '8');
    // Meanwhile the user spends 5 elsewhere through the token API.
    assert.equal((await call(t.app, '/token', 'transfer', await signedTransfer(user, elsewhere.address, '5'))).resultCode, '200');
    const sentBefore = await relayerTxCount();
    const { posEnd, appEnd } = await payment.transfer();
    assert.equal(posEnd.common.res_code, '02', JSON.stringify(posEnd.common));
    assert.equal(appEnd.common.res_code, '02', JSON.stringify(appEnd.common));
    assert.equal(await relayerTxCount(), sentBefore, 'no transaction was sent for the refused transfer');
    assert.equal(await balance(user.address), units('5'));
    assert.equal(await balance(store.settlementAddress), 0n);
    assert.equal((await t.platform.payments.findPayment(store.tid, payment.tranNo))?.status, 'failed');
  });
});

describe('a burst of racing payments, refunds, claims and transfers', () => {
  test('every balance is exact, refunds never exceed what was paid, and a stranger re-sending every mined transaction moves nothing', async () => {
    const store = await t.platform.payments.addStore({ tid: `MX-${randomUUID().slice(0, 8)}`, name: 'Burst Shop' });
    secrets.push(store.apiKey);
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '4' });
    const users = await Promise.all([payer('10'), payer('10'), payer('10')]);
    const fromBlock = (await chain().client.getBlockNumber()) + 1n;

    // Three payments of 6 at once; users 1 and 2 also send 6 elsewhere at the same moment, so for each
    // of them exactly one of the two can be paid from 10 (user 0's payment has no rival).
    const elsewhere = await fundedWallet('0');
    const payments = await Promise.all(users.map((u) => payUntilRequest(store, u, '6000')));
    const transfers = await Promise.all(users.slice(1).map((u) => signedTransfer(u, elsewhere.address, '6')));
    const [paid, sent] = await Promise.all([
      Promise.all(payments.map((p) => p.transfer())),
      Promise.all(transfers.map((tr) => call(t.app, '/token', 'transfer', tr))),
    ]);
    const approved = paid.filter((r) => r.posEnd.common.res_code === '00');
    const sentOk = sent.filter((r) => r.resultCode === '200');
    assert.equal(paid[0]!.posEnd.common.res_code, '00', JSON.stringify(paid[0]!.posEnd.common));
    for (let i = 0; i < users.length; i++) {
      const outcomes = [paid[i]!.posEnd.common.res_code === '00', i > 0 && sent[i - 1]!.resultCode === '200'];
      assert.equal(outcomes.filter(Boolean).length, 1, `user ${i}: exactly one of payment and transfer went through (${paid[i]!.posEnd.common.res_code}, ${sent[i - 1]?.resultCode})`);
      assert.equal(await balance(users[i]!.address), units('4'));
    }
    assert.equal(await balance(store.settlementAddress), units('4') + units('6') * BigInt(approved.length));
    assert.equal(await balance(elsewhere.address), units('6') * BigInt(sentOk.length));

    // Every approved payment is refunded by two cancellations racing for all of it, and a reward of
    // the store is claimed at the same time: no payment is refunded twice.
    const reward = await t.platform.rewards.issueReward(store, { tid: store.tid, rewardReason: `burst-${randomUUID()}`, exchangeAmount: '3000' });
    const claimer = await payer('0');
    const claim = async () => {
      const app = openSession(client, 'DoPayment', claimer.token);
      app.send({ state: 'START_REWARD', reward_id: reward.rewardId, token_amount: '3', token_symbol: 'VIXP', user_address: claimer.address });
      const answer = await app.next();
      await app.closed;
      return answer.common.res_code as string;
    };
    // With user_address, as a POS sends it: payments of several users can share one settlement transaction.
    const cancel = (transferTransactionId: string, userAddress: string) => unary(client, 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: transferTransactionId, token_amount: '', user_address: userAddress });
    const storeBefore = await balance(store.settlementAddress);
    const [refunds, claims] = await Promise.all([
      Promise.all(approved.flatMap((r) => {
        const payerAddress = users[paid.indexOf(r)]!.address;
        return [cancel(r.posEnd.content.transfer_transaction_id, payerAddress), cancel(r.posEnd.content.transfer_transaction_id, payerAddress)];
      })),
      Promise.all([claim(), claim()]),
    ]);
    const refunded = refunds.filter((r: any) => r.common.res_code === '00');
    assert.equal(refunded.length, approved.length, `refund answers: ${refunds.map((r: any) => r.common.res_code).join(',')}`);
    assert.deepEqual(claims.sort(), ['00', '05']);
    assert.equal(await balance(claimer.address), units('3'));
    assert.equal(await balance(store.settlementAddress), storeBefore - units('6') * BigInt(approved.length) - units('3'), 'the store paid each refund once and the reward once');
    for (const r of approved) {
      const user = users[paid.indexOf(r)]!;
      assert.equal(await balance(user.address), units('10'), 'a refunded payer has all of it back');
    }

    assert.equal(await replayEverythingSince(fromBlock), 0, 'no re-sent transaction succeeded');
    for (const r of approved) assert.equal(await balance(users[paid.indexOf(r)]!.address), units('10'));
    assert.equal(await balance(claimer.address), units('3'));
    await assertConserved();
  });
});

describe('the same operation 50 times at once', () => {
  test('50 claims of one reward, 50 full cancellations of one payment, 50 START_PAY of one approved tran_no: each pays once', async () => {
    const store = await t.platform.payments.addStore({ tid: `MD-${randomUUID().slice(0, 8)}`, name: 'Duplicate Shop' });
    secrets.push(store.apiKey);
    await t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100' });
    const claimer = await payer('0');
    const reward = await t.platform.rewards.issueReward(store, { tid: store.tid, rewardReason: `dup-${randomUUID()}`, exchangeAmount: '3000' });
    const claim = async () => {
      const app = openSession(client, 'DoPayment', claimer.token);
      app.send({ state: 'START_REWARD', reward_id: reward.rewardId, token_amount: '3', token_symbol: 'VIXP', user_address: claimer.address });
      const answer = await app.next(60_000);
      await app.closed;
      return answer.common.res_code as string;
    };
    const claims = await Promise.all(Array.from({ length: 50 }, claim));
    assert.equal(claims.filter((c) => c === '00').length, 1, `claims: ${claims.join(',')}`);
    assert.equal(await balance(claimer.address), units('3'));

    const user = await payer('10');
    const payment = await payUntilRequest(store, user, '6000');
    const { posEnd } = await payment.transfer();
    assert.equal(posEnd.common.res_code, '00');
    const storeBefore = await balance(store.settlementAddress);
    const cancels = await Promise.all(Array.from({ length: 50 }, () => unary(client, 'CancelPayment', store.apiKey, {
      tid: store.tid, transfer_transaction_id: posEnd.content.transfer_transaction_id, token_amount: '',
    })));
    const refunded = cancels.filter((r: any) => r.common.res_code === '00');
    assert.equal(refunded.length, 1, `cancellations: ${cancels.map((r: any) => r.common.res_code).join(',')}`);
    assert.equal(await balance(user.address), units('10'));
    assert.equal(await balance(store.settlementAddress), storeBefore - units('6'));

    // The POS retries the approved tran_no 50 times at once: every retry gets the original END_PAY.
    const retries = await Promise.all(Array.from({ length: 50 }, async () => {
      const pos = openSession(client, 'StartPayment', store.apiKey);
      pos.send({
        state: 'START_PAY', tid: store.tid, tran_no: payment.tranNo, exchange_amount: '6000', user_uuid: randomUUID(), contract_address: vixp(),
        token_symbol: 'VIXP', user_address: user.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
      });
      const answer = await pos.next(60_000);
      await pos.closed;
      return answer;
    }));
    for (const r of retries) {
      assert.equal(r.common.res_code, '00', JSON.stringify(r.common));
      assert.equal(r.content.approval_no, posEnd.content.approval_no);
      assert.equal(r.content.transfer_transaction_id, posEnd.content.transfer_transaction_id);
    }
    assert.equal(await balance(user.address), units('10'), 'no retry paid again');
    await assertConserved();
  });
});

describe('logs', () => {
  test('a transfer the chain refuses (its clock is past the authorization) is refused cleanly, holds nothing, and no log line carries anything signed or secret', async () => {
    // The chain's clock runs an hour ahead: every authorization we sign is already expired there, so
    // the settlement skips it (and a node's errors would quote the signed calldata).
    const sender = await fundedWallet('10');
    const receiver = await fundedWallet('0');
    const anvil = anvilControls(chain());
    await anvil.increaseTime({ seconds: 3600 });
    await anvil.mine({ blocks: 1 });
    const prepared = await signedTransfer(sender, receiver.address, '4');
    const refused = await call(t.app, '/token', 'transfer', prepared);
    assert.equal(refused.resultCode, '502', JSON.stringify(refused));
    const held = await t.platform.store.db.selectFrom('authorizations').select('status').where('from_address', '=', sender.address).execute();
    assert.deepEqual(held.map((r) => r.status), ['expired'], 'the authorization can never execute and holds nothing');
    assert.equal(await balance(sender.address), units('10'));
    assert.equal(await balance(receiver.address), 0n);

    const journal = await t.platform.store.db.selectFrom('chain_txs').select('raw_tx').execute();
    for (const row of journal) secrets.push(row.raw_tx);
    const keys = await t.platform.store.db.selectFrom('accounts').select('private_key_enc').execute();
    for (const row of keys) secrets.push(t.platform.vault.decrypt(row.private_key_enc));
    assert.ok(logs.length > 10_000, 'the platform logged at trace level');
    const leaked = secrets.filter((s) => s.length >= 16).filter((s) => logs.includes(s.startsWith('0x') ? s.slice(2) : s));
    assert.deepEqual(leaked.map((s) => `${s.slice(0, 10)}…`), [], 'no signature, calldata, raw transaction, key, temp key, hashKey, mnemonic or JWT in the logs');
    const longHex = /.{0,300}[0-9a-fA-F]{130,}/.exec(logs)?.[0];
    assert.equal(longHex, undefined, 'no signature-length hex at all');
  });
});
