import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from './db.ts';
import { createStatementRepository, type StatementRepository } from './statement-repository.ts';
import { statementDay } from '../statements/statement-day.ts';

// The statement's and the operator's day's read queries on a real SQLite store: which rows fall in
// a day [start, end) of the store's zone (a row at the day's first second is in, one at the next
// day's first second is out), which of a store's transfers a day's transactions carried, and the
// record of `statement.ready` once per store and day. The rows are written as the platform's
// repositories leave them; what is asserted is what a statement or the console shows of them.

const factory = storeFactories.find((f) => f.name === 'sqlite')!;
let store: Store;
let dispose: () => Promise<void>;
let repository: StatementRepository;
before(async () => {
  ({ store, dispose } = await factory.open());
  repository = createStatementRepository(store.db);
});
after(async () => { await dispose?.(); });

const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
let nonce = 0;

/** A relayed transaction in the journal: mined in `block` at `timestamp` (seconds) unless `signed`. */
async function chainTx(o: {
  network?: string; txHash: string; kind?: string; block: number | null; timestamp: number | null; txIndex?: number | null; status?: 'signed' | 'confirmed' | 'failed';
  gasUsed?: number | null; feeWei?: string | null; l1FeeWei?: string | null; operatorFeeWei?: string | null;
}) {
  nonce++;
  await store.db.insertInto('chain_txs').values({
    id: `tx-${nonce}`, network: o.network ?? 'ethereum', kind: o.kind ?? 'settlement', reference: null, relayer: '0xrelayer', nonce, raw_tx: '0x00', tx_hash: o.txHash,
    from_address: null, to_address: null, contract_address: null, amount: null, status: o.status ?? 'confirmed', block_number: o.block, block_timestamp: o.timestamp,
    tx_index: o.txIndex === undefined ? 0 : o.txIndex, gas_used: o.gasUsed === undefined ? 21_000 : o.gasUsed, fee_wei: o.feeWei === undefined ? '1000' : o.feeWei,
    l1_fee_wei: o.l1FeeWei ?? null, operator_fee_wei: o.operatorFeeWei ?? null, error: null, created_at: 1, updated_at: 1,
  }).execute();
}

/** An authorization the transaction `txHash` executed (`used`) or carries still (`submitted`). */
async function authorization(txHash: string, o: { network?: string; reference?: string; status?: 'used' | 'submitted' } = {}) {
  nonce++;
  await store.db.insertInto('authorizations').values({
    nonce: `auth-${nonce}`, network: o.network ?? 'ethereum', reference: o.reference ?? `pay-${nonce}`, contract_address: '0xtoken', from_address: '0xfrom', to_address: '0xto',
    value: '1', valid_before: 2_000_000_000, from_block: 1, status: o.status ?? 'used', tx_hash: txHash, cancel_tx_hash: null, created_at: 1, updated_at: 1, chain_nonce: null,
  }).execute();
}

describe('the operator\'s day: minedBetween', () => {
  // 2026-11-26 in Seoul (UTC+9): [2026-11-25T15:00Z, 2026-11-26T15:00Z).
  const day = statementDay('2026-11-26', 'Asia/Seoul');
  const [start, end] = [day.startMs / 1000, day.endMs / 1000];

  test('the day is [its first second, the next day\'s first second): a transaction at the start is in, one at the end is out; signed ones and other networks never', async () => {
    assert.equal(start, Date.UTC(2026, 10, 25, 15) / 1000);
    assert.equal(end - start, 86_400);
    await chainTx({ txHash: hash(1), block: 10, timestamp: start - 1 });
    await chainTx({ txHash: hash(2), block: 11, timestamp: start });
    await chainTx({ txHash: hash(3), block: 12, timestamp: end - 1 });
    await chainTx({ txHash: hash(4), block: 13, timestamp: end });
    // Journaled with a timestamp but not known to be mined: not the day's.
    await chainTx({ txHash: hash(5), block: 12, timestamp: start + 10, status: 'signed' });
    await chainTx({ network: 'bnb', txHash: hash(6), block: 5, timestamp: start + 10 });
    await chainTx({ network: 'optimism', txHash: hash(7), block: 900, timestamp: start + 20, status: 'failed', gasUsed: null, feeWei: null });
    const mined = await repository.minedBetween(['ethereum', 'optimism'], start, end);
    assert.deepEqual(mined.map((t) => t.txHash), [hash(2), hash(3), hash(7)], 'ethereum first, then optimism; the end is out');
    assert.deepEqual(await repository.minedBetween(['bnb'], start, end).then((rows) => rows.map((t) => t.txHash)), [hash(6)]);
    assert.deepEqual(await repository.minedBetween(['ethereum'], start + 1, end + 1).then((rows) => rows.map((t) => t.txHash)), [hash(3), hash(4)]);
    assert.deepEqual(await repository.minedBetween(['ethereum'], start - 1, start).then((rows) => rows.map((t) => t.txHash)), [hash(1)]);
    assert.deepEqual(await repository.minedBetween(['ethereum'], start, start), [], 'an empty range holds nothing');
    assert.equal(mined[2]!.status, 'failed', 'a reverted transaction cost its fee too');
  });

  test('each transaction as mined: its block, kind and status, its cost in wei as recorded (strings), the transfers it executed', async () => {
    const [from, to] = [start + 1000, start + 2000];
    await chainTx({ network: 'opbnb', txHash: hash(20), block: 7, txIndex: 2, timestamp: from + 5, gasUsed: 123_456, feeWei: '340282366920938463463374607431768211457', l1FeeWei: '9007199254740993', operatorFeeWei: '16000' });
    await chainTx({ network: 'opbnb', txHash: hash(21), block: 7, txIndex: 0, timestamp: from + 5, kind: 'deploy', gasUsed: null, feeWei: null });
    await chainTx({ network: 'opbnb', txHash: hash(22), block: 6, txIndex: 5, timestamp: from, kind: 'mint' });
    await authorization(hash(20), { network: 'opbnb' });
    await authorization(hash(20), { network: 'opbnb', reference: 'x402:opbnb:a:b:c' });
    await authorization(hash(20), { network: 'opbnb', reference: 'x402:opbnb:a:b:d' });
    // Not executed by it: still submitted, or the same hash on another network.
    await authorization(hash(20), { network: 'opbnb', status: 'submitted' });
    await authorization(hash(20), { network: 'opbnb', reference: 'x402:opbnb:a:b:e', status: 'submitted' });
    await authorization(hash(20), { network: 'bnb' });
    await authorization(hash(20), { network: 'bnb', reference: 'x402:bnb:a:b:c' });
    const mined = await repository.minedBetween(['opbnb'], from, to);
    assert.deepEqual(mined, [
      { network: 'opbnb', txHash: hash(22), kind: 'mint', blockNumber: 6, status: 'confirmed', gasUsed: '21000', feeWei: '1000', l1FeeWei: null, operatorFeeWei: null, transfers: 0, x402Transfers: 0 },
      { network: 'opbnb', txHash: hash(21), kind: 'deploy', blockNumber: 7, status: 'confirmed', gasUsed: null, feeWei: null, l1FeeWei: null, operatorFeeWei: null, transfers: 0, x402Transfers: 0 },
      {
        network: 'opbnb', txHash: hash(20), kind: 'settlement', blockNumber: 7, status: 'confirmed', gasUsed: '123456',
        feeWei: '340282366920938463463374607431768211457', l1FeeWei: '9007199254740993', operatorFeeWei: '16000', transfers: 3, x402Transfers: 2,
      },
    ]);
    assert.equal(BigInt(mined[2]!.feeWei!), 2n ** 128n + 1n, 'the fee exact, past 2^53');
    assert.equal(typeof mined[2]!.blockNumber, 'number');
    assert.equal(typeof mined[2]!.transfers, 'number');
  });

  test('the console\'s operator\'s day asks for its zone\'s day: the transactions of its first second in, of the next day\'s first second out', async () => {
    const { operatorDay } = await import('../statements/operator-day.ts');
    const seoul = statementDay('2026-11-20', 'Asia/Seoul');
    const [s, e] = [seoul.startMs / 1000, seoul.endMs / 1000];
    await chainTx({ network: 'bnb', txHash: hash(30), block: 30, timestamp: s - 1 });
    await chainTx({ network: 'bnb', txHash: hash(31), block: 31, timestamp: s });
    await chainTx({ network: 'bnb', txHash: hash(32), block: 32, timestamp: e - 1 });
    await chainTx({ network: 'bnb', txHash: hash(33), block: 33, timestamp: e });
    const operator = await operatorDay({ repository, timeZone: 'Asia/Seoul', networks: ['bnb'] }, '2026-11-20');
    assert.deepEqual(operator.transactions.map((t) => t.txHash), [hash(31), hash(32)]);
    assert.deepEqual([operator.from, operator.to], ['2026-11-19T15:00:00.000Z', '2026-11-20T15:00:00.000Z']);
    // The same instants are another day in UTC: 31 is the 19th's there, 32 and 33 the 20th's.
    const utc = await operatorDay({ repository, timeZone: 'UTC', networks: ['bnb'] }, '2026-11-20');
    assert.deepEqual(utc.transactions.map((t) => t.txHash), [hash(32), hash(33)]);
  });
});

describe('the statement: minedTxs and rowsOf', () => {
  test('minedTxs: the network\'s transactions of blocks from..to, both ends in, in chain order (block, then index)', async () => {
    await chainTx({ network: 'polygon-x', txHash: hash(40), block: 99, timestamp: 1 });
    await chainTx({ network: 'polygon-x', txHash: hash(41), block: 100, txIndex: 3, timestamp: 2 });
    await chainTx({ network: 'polygon-x', txHash: hash(42), block: 100, txIndex: 1, timestamp: 2 });
    await chainTx({ network: 'polygon-x', txHash: hash(43), block: 101, txIndex: null, timestamp: null });
    await chainTx({ network: 'polygon-x', txHash: hash(44), block: 102, timestamp: 4 });
    await chainTx({ network: 'polygon-y', txHash: hash(45), block: 100, timestamp: 2 });
    assert.deepEqual(await repository.minedTxs('polygon-x', 100, 101), [
      { txHash: hash(42), blockNumber: 100, txIndex: 1, blockTimestamp: 2 },
      { txHash: hash(41), blockNumber: 100, txIndex: 3, blockTimestamp: 2 },
      { txHash: hash(43), blockNumber: 101, txIndex: 0, blockTimestamp: null },
    ]);
    assert.deepEqual((await repository.minedTxs('polygon-x', 99, 99)).map((t) => t.txHash), [hash(40)]);
    assert.deepEqual((await repository.minedTxs('polygon-x', 102, 200)).map((t) => t.txHash), [hash(44)]);
    assert.deepEqual(await repository.minedTxs('polygon-x', 103, 200), []);
  });

  const tid = 'T-stmt';
  const account = '0xAbCdEf0000000000000000000000000000000001';
  const user = '0x1111111111111111111111111111111111111111';

  before(async () => {
    await store.db.insertInto('stores').values({ tid, name: 'shop', settlement_address: account, api_key_hash: 'k1', created_at: 1_700_000_000_123 }).execute();
    await store.db.insertInto('stores').values({ tid: 'T-other', name: 'other', settlement_address: '0x2222222222222222222222222222222222222222', api_key_hash: 'k2', created_at: 5 }).execute();
  });

  async function payment(id: string, o: { tid?: string; status?: 'approved' | 'pending' | 'failed'; txHash: string | null; nulls?: boolean }) {
    await store.db.insertInto('payments').values({
      id, tid: o.tid ?? tid, tran_no: `tran-${id}`, status: o.status ?? 'approved', user_uuid: 'u', user_address: o.nulls ? null : user, settlement_address: account,
      network: 'ethereum', contract_address: o.nulls ? null : '0xtoken', token_symbol: o.nulls ? null : 'VIXP', token_amount: o.nulls ? null : '123456789012345678901234567890',
      exchange_amount: '1000', exchange_currency: 'KRW', exchange_rate: o.nulls ? null : '1.5', exchange_date_index: null, transfer_transaction_id: o.txHash,
      approval_no: o.nulls ? null : `ap-${id}`, approval_date: null, refunded_amount: '0', failure_code: null, created_at: 1, updated_at: 1, run_by: null,
    }).execute();
  }

  async function refund(id: string, paymentId: string, o: { status?: 'done' | 'pending' | 'failed'; txHash: string }) {
    await store.db.insertInto('payment_cancellations').values({
      id, payment_id: paymentId, status: o.status ?? 'done', token_amount: '400', exchange_amount: '4', transfer_transaction_id: o.txHash,
      cancel_no: `cn-${id}`, cancel_date: null, created_at: 1, updated_at: 1,
    }).execute();
  }

  async function reward(id: string, o: { tid?: string; status: 'issued' | 'claiming' | 'claimed' | 'canceling' | 'canceled'; claim: string | null; cancel?: string | null; userAddress?: string | null }) {
    await store.db.insertInto('rewards').values({
      id, tid: o.tid ?? tid, reward_reason: `r-${id}`, status: o.status, network: 'ethereum', settlement_address: account, contract_address: '0xtoken', token_symbol: 'VIXP',
      token_amount: '77', exchange_amount: '7', exchange_currency: 'KRW', exchange_rate: '0.1', exchange_date_index: '1', reward_date: '20261126', expires_at: 9,
      user_address: o.userAddress === undefined ? user : o.userAddress, claim_transaction_id: o.claim, claimed_at: null, cancel_no: o.cancel ? `rc-${id}` : null, cancel_date: null,
      cancel_transaction_id: o.cancel ?? null, created_at: 1, updated_at: 1,
    }).execute();
  }

  async function x402(n: number, o: { status?: 'accepted' | 'settled' | 'failed'; payTo?: string; txHash: string | null }) {
    const nonceHex = hash(1000 + n);
    await store.db.insertInto('x402_settlements').values({
      id: `ethereum:0xtoken:${user}:${nonceHex}`, nonce: nonceHex, network: 'ethereum', payer: user, pay_to: o.payTo ?? account.toLowerCase(), asset: '0xasset', amount: '5000',
      valid_after: '0', valid_before: '9', signature: '0x11', key_id: 'k', status: o.status ?? 'settled', tx_hash: o.txHash, error_reason: null, created_at: 1, updated_at: 1,
    }).execute();
    return nonceHex;
  }

  test('rowsOf: the store\'s approved payments, done refunds, claimed rewards, given-back rewards and settled x402 payments into its account, carried by the day\'s transactions', async () => {
    const [inDay, other, notInDay] = [hash(50), hash(51), hash(52)];
    await payment('p1', { txHash: inDay });
    await payment('p2', { txHash: other, nulls: true });
    await payment('p3', { txHash: notInDay });
    await payment('p4', { txHash: inDay, status: 'pending' });
    await payment('p5', { txHash: inDay, status: 'failed' });
    await payment('p6', { txHash: inDay, tid: 'T-other' });
    await refund('c1', 'p1', { txHash: other });
    await refund('c2', 'p1', { txHash: other, status: 'pending' });
    await refund('c3', 'p1', { txHash: other, status: 'failed' });
    await refund('c4', 'p6', { txHash: other });
    await refund('c5', 'p3', { txHash: notInDay });
    await refund('c6', 'p2', { txHash: other });
    await reward('r1', { status: 'claimed', claim: inDay });
    await reward('r2', { status: 'canceling', claim: inDay });
    await reward('r3', { status: 'canceled', claim: notInDay, cancel: inDay, userAddress: null });
    await reward('r4', { status: 'claiming', claim: inDay });
    await reward('r5', { status: 'issued', claim: inDay });
    await reward('r6', { status: 'claimed', claim: inDay, tid: 'T-other' });
    await reward('r7', { status: 'canceling', claim: notInDay, cancel: other });
    await reward('r8', { status: 'claimed', claim: other, userAddress: null });
    const x1 = await x402(1, { txHash: inDay });
    await x402(2, { txHash: inDay, status: 'accepted' });
    await x402(3, { txHash: inDay, status: 'failed' });
    await x402(4, { txHash: inDay, payTo: '0x2222222222222222222222222222222222222222' });
    const x5 = await x402(5, { txHash: other, payTo: account });
    await x402(6, { txHash: notInDay });

    const rows = await repository.rowsOf(tid, [inDay, other]);
    assert.deepEqual(rows, [
      {
        kind: 'payment', sourceId: 'p1', reference: 'tran-p1', approvalNo: 'ap-p1', txHash: inDay, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '123456789012345678901234567890', exchangeAmount: '1000', exchangeCurrency: 'KRW', exchangeRate: '1.5', counterparty: user,
      },
      {
        kind: 'payment', sourceId: 'p2', reference: 'tran-p2', approvalNo: null, txHash: other, contractAddress: '', tokenSymbol: '',
        tokenAmount: '0', exchangeAmount: '1000', exchangeCurrency: 'KRW', exchangeRate: null, counterparty: '',
      },
      {
        kind: 'refund', sourceId: 'c1', reference: 'tran-p1', approvalNo: 'cn-c1', txHash: other, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '400', exchangeAmount: '4', exchangeCurrency: 'KRW', exchangeRate: '1.5', counterparty: user,
      },
      {
        kind: 'refund', sourceId: 'c6', reference: 'tran-p2', approvalNo: 'cn-c6', txHash: other, contractAddress: '', tokenSymbol: '',
        tokenAmount: '400', exchangeAmount: '4', exchangeCurrency: 'KRW', exchangeRate: null, counterparty: '',
      },
      {
        kind: 'reward', sourceId: 'r1', reference: 'r1', approvalNo: null, txHash: inDay, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '77', exchangeAmount: '7', exchangeCurrency: 'KRW', exchangeRate: '0.1', counterparty: user,
      },
      {
        kind: 'reward', sourceId: 'r2', reference: 'r2', approvalNo: null, txHash: inDay, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '77', exchangeAmount: '7', exchangeCurrency: 'KRW', exchangeRate: '0.1', counterparty: user,
      },
      {
        kind: 'reward', sourceId: 'r8', reference: 'r8', approvalNo: null, txHash: other, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '77', exchangeAmount: '7', exchangeCurrency: 'KRW', exchangeRate: '0.1', counterparty: '',
      },
      {
        kind: 'reward_cancellation', sourceId: 'r3', reference: 'r3', approvalNo: 'rc-r3', txHash: inDay, contractAddress: '0xtoken', tokenSymbol: 'VIXP',
        tokenAmount: '77', exchangeAmount: '7', exchangeCurrency: 'KRW', exchangeRate: '0.1', counterparty: '',
      },
      {
        kind: 'x402', sourceId: x1, reference: `${user}/${x1}`, approvalNo: null, txHash: inDay, contractAddress: '0xasset', tokenSymbol: '',
        tokenAmount: '5000', exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: user,
      },
      {
        kind: 'x402', sourceId: x5, reference: `${user}/${x5}`, approvalNo: null, txHash: other, contractAddress: '0xasset', tokenSymbol: '',
        tokenAmount: '5000', exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: user,
      },
    ]);
    // The claims of another day's transaction: r3 (given back today, above) and r7 (being given back) were claimed then.
    assert.deepEqual((await repository.rowsOf(tid, [notInDay])).map((r) => [r.kind, r.sourceId]),
      [['payment', 'p3'], ['refund', 'c5'], ['reward', 'r3'], ['reward', 'r7'], ['x402', hash(1006)]]);
    assert.deepEqual(await repository.rowsOf(tid, []), [], 'no transaction, no row');
    // A tid that is no store: its payments only, no x402 payment (no settlement account to match).
    await payment('p9', { txHash: inDay, tid: 'T-gone' });
    assert.deepEqual((await repository.rowsOf('T-gone', [inDay])).map((r) => [r.kind, r.sourceId]), [['payment', 'p9']]);
  });
});

describe('stores and statement.ready', () => {
  test('stores: every store by tid, its settlement account and when it was added (ms, a number)', async () => {
    const stores = await repository.stores();
    assert.deepEqual(stores.filter((s) => s.tid.startsWith('T-')), [
      { tid: 'T-other', settlementAddress: '0x2222222222222222222222222222222222222222', createdAt: 5 },
      { tid: 'T-stmt', settlementAddress: '0xAbCdEf0000000000000000000000000000000001', createdAt: 1_700_000_000_123 },
    ]);
  });

  test('markReady records a store\'s day once, with its webhook event in the same transaction; readyDays answers tid|date of the dates asked', async () => {
    const event = { type: 'statement.ready' as const, tid: 'T-stmt', data: { date: '2026-11-26' } };
    assert.deepEqual(await repository.readyDays([]), new Set());
    assert.equal(await repository.markReady('T-stmt', '2026-11-26', event, 1_000), true);
    assert.equal(await repository.markReady('T-stmt', '2026-11-26', event, 2_000), false, 'recorded already');
    assert.equal(await repository.markReady('T-other', '2026-11-26', { ...event, tid: 'T-other' }, 3_000), true);
    assert.equal(await repository.markReady('T-stmt', '2026-11-27', { ...event, data: { date: '2026-11-27' } }, 4_000), true);
    const events = await store.db.selectFrom('webhook_events').select(['tid', 'type', 'data', 'created_at']).where('type', '=', 'statement.ready').orderBy('created_at').execute();
    assert.deepEqual(events.map((e) => [e.tid, e.data, Number(e.created_at)]),
      [['T-stmt', '{"date":"2026-11-26"}', 1_000], ['T-other', '{"date":"2026-11-26"}', 3_000], ['T-stmt', '{"date":"2026-11-27"}', 4_000]]);
    assert.deepEqual(await repository.readyDays(['2026-11-26']), new Set(['T-stmt|2026-11-26', 'T-other|2026-11-26']));
    assert.deepEqual(await repository.readyDays(['2026-11-27', '2026-11-28']), new Set(['T-stmt|2026-11-27']));
    assert.deepEqual(await repository.readyDays(['2026-11-25']), new Set());
  });
});
