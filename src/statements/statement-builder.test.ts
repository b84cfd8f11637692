import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '#shared/errors.ts';
import { openStatement, type StatementDeps } from './statement-builder.ts';
import { statementDay, zonedIsoTime } from './statement-day.ts';
import type { StatementChain, TransferLog } from './statement-chain.ts';
import type { MinedTx, StatementRow } from '../store/statement-repository.ts';
import type { StatementLine, StatementSummary } from './statement.ts';

const account = '0x00000000000000000000000000000000000000aa';
const user = '0x00000000000000000000000000000000000000bb';
const token = '0x00000000000000000000000000000000000000cc';
const day = statementDay('2026-11-26', 'Asia/Seoul');
const daySec = day.startMs / 1000;
const unit = 10n ** 18n;

/** A chain of 10 blocks in the day (block n at daySec + n·60) and one before; balances as given. */
function fakeChain(logs: TransferLog[], balances: { opening: bigint; closing: bigint }): StatementChain {
  const timestamp = (n: number) => (n === 0 ? daySec - 60 : daySec + n * 60);
  return {
    head: async () => ({ number: 10, timestamp: timestamp(10) }),
    timestampOf: async (n) => timestamp(n),
    firstBlockFrom: async (sec, head) => { for (let n = 0; n <= head; n++) if (timestamp(n) >= sec) return n; return head + 1; },
    balanceOf: async (_token, _account, n) => (n < 1 ? balances.opening : balances.closing),
    transfers: async (_tokens, _account, from, to) => logs.filter((l) => l.blockNumber >= from && l.blockNumber <= to),
  };
}

const payment = (reference: string, txHash: string, amount: bigint): StatementRow => ({
  kind: 'payment', sourceId: reference, reference, approvalNo: `A${reference}`, txHash, contractAddress: token, tokenSymbol: 'VIXP',
  tokenAmount: amount.toString(), exchangeAmount: '1000', exchangeCurrency: 'KRW', exchangeRate: '1000', counterparty: user,
});
const log = (txHash: string, block: number, logIndex: number, value: bigint, from = user, to = account): TransferLog => ({
  token, from, to, value, txHash, blockNumber: block, txIndex: 0, logIndex,
});

async function read(deps: StatementDeps): Promise<{ lines: StatementLine[]; summary: StatementSummary }> {
  const statement = await openStatement(deps, 'T-1', '2026-11-26');
  const lines: StatementLine[] = [];
  const iterator = statement.lines();
  for (let next = await iterator.next(); ; next = await iterator.next()) {
    if (next.done) return { lines, summary: next.value };
    lines.push(next.value);
  }
}

function depsOf(txs: MinedTx[], rows: StatementRow[], chain: StatementChain, stepBlocks?: number): StatementDeps {
  return {
    repository: {
      minedTxs: async (_network, from, to) => txs.filter((t) => t.blockNumber >= from && t.blockNumber <= to),
      rowsOf: async (_tid, hashes) => rows.filter((r) => hashes.includes(r.txHash)),
    },
    findStore: async (tid) => ({ tid, settlementAddress: account }),
    chain, network: 'ethereum',
    tokens: async () => [{ contractAddress: token, symbol: 'VIXP', decimals: 18 }],
    token: async () => ({ contractAddress: token, symbol: 'VIXP', decimals: 18 }),
    clock: () => day.endMs + 3_600_000, timeZone: 'Asia/Seoul', ...(stepBlocks && { stepBlocks }),
  };
}

test('two payments of one batch with the same payer and amount each take their own log; steps of one block keep chain order', async () => {
  const txs = [{ txHash: '0x01', blockNumber: 3, txIndex: 0, blockTimestamp: null }, { txHash: '0x02', blockNumber: 5, txIndex: 1, blockTimestamp: null }];
  const rows = [payment('P2', '0x01', 5n * unit), payment('P1', '0x01', 5n * unit), payment('P3', '0x02', 2n * unit)];
  const logs = [log('0x01', 3, 4, 5n * unit), log('0x01', 3, 7, 5n * unit), log('0x02', 5, 1, 2n * unit)];
  for (const stepBlocks of [1, 64]) {
    const { lines, summary } = await read(depsOf(txs, rows, fakeChain(logs, { opening: 10n * unit, closing: 22n * unit }), stepBlocks));
    assert.deepEqual(lines.map((l) => [l.reference, l.logIndex, l.reconciled]), [['P2', 4, true], ['P1', 7, true], ['P3', 1, true]]);
    assert.equal(summary.reconciled, true);
    assert.deepEqual(summary.balances.map((b) => [b.opening, b.net, b.closing, b.difference]), [['10', '12', '22', '0']]);
    assert.equal(lines[0]!.localTime, '2026-11-26 00:03:00');
  }
});

test('a record without its log, a log without a record and a balance no log explains: each listed, not reconciled', async () => {
  const txs = [{ txHash: '0x01', blockNumber: 2, txIndex: 0, blockTimestamp: null }];
  // P1's transaction carries a transfer of another amount; a stranger sends 3 in block 4.
  const logs = [log('0x01', 2, 0, 4n * unit), log('0x09', 4, 2, 3n * unit, '0x00000000000000000000000000000000000000dd')];
  const { lines, summary } = await read(depsOf(txs, [payment('P1', '0x01', 5n * unit)], fakeChain(logs, { opening: 0n, closing: 8n * unit })));
  // A line without its log comes after its transaction's logs.
  assert.deepEqual(lines.map((l) => [l.kind, l.amount, l.logIndex, l.reconciled]), [
    ['unexplained', '4', 0, false], ['payment', '5', null, false], ['unexplained', '3', 2, false],
  ]);
  assert.equal(summary.reconciled, false);
  assert.deepEqual(summary.discrepancies.map((d) => d.type), ['unexplained_transfer', 'line_without_log', 'unexplained_transfer', 'balance_mismatch']);
  // closing 8 = opening 0 + net 5 + unexplained 7 − 4 that no log shows.
  assert.deepEqual(summary.discrepancies.at(-1), { type: 'balance_mismatch', token: 'VIXP', expected: '12', actual: '8', difference: '-4' });
  assert.equal(summary.discrepancyCount, 4);
});

test('a day that has not begun is refused; one with no block has equal balances and no line', async () => {
  const early = { ...depsOf([], [], fakeChain([], { opening: 0n, closing: 0n })), clock: () => day.startMs - 1 };
  await assert.rejects(openStatement(early, 'T-1', '2026-11-26'), /has not begun/);
  await assert.rejects(openStatement(depsOf([], [], fakeChain([], { opening: 0n, closing: 0n })), 'T-1', '2026-13-01'), /yyyy-mm-dd/);
  const quiet: StatementChain = { ...fakeChain([], { opening: 7n * unit, closing: 7n * unit }), head: async () => ({ number: 0, timestamp: daySec - 60 }) };
  const { lines, summary } = await read({ ...depsOf([], [], quiet), clock: () => day.endMs + 120_000 });
  assert.deepEqual(lines, []);
  assert.deepEqual(summary.balances.map((b) => [b.opening, b.closing]), [['7', '7']]);
  assert.equal(summary.reconciled, true);
});

test('days of a time zone with daylight saving last 23 and 25 hours', () => {
  const hours = (d: ReturnType<typeof statementDay>) => (d.endMs - d.startMs) / 3_600_000;
  assert.equal(hours(statementDay('2026-03-08', 'America/New_York')), 23);
  assert.equal(hours(statementDay('2026-11-01', 'America/New_York')), 25);
  assert.equal(new Date(statementDay('2026-11-26', 'Asia/Seoul').startMs).toISOString(), '2026-11-25T15:00:00.000Z');
  assert.equal(new Date(statementDay('2026-11-26', 'Pacific/Kiritimati').startMs).toISOString(), '2026-11-25T10:00:00.000Z');
  assert.throws(() => statementDay('2026-02-29', 'UTC'), /yyyy-mm-dd/);
});

test('a statement names its day\'s first and last instants in its zone, with the offset (also across a daylight-saving change)', async () => {
  const statement = await openStatement({ ...depsOf([], [], fakeChain([], { opening: 0n, closing: 0n })), clock: () => day.endMs + 120_000 }, 'T-1', '2026-11-26');
  assert.equal(statement.header.timeZone, 'Asia/Seoul');
  assert.equal(statement.header.firstInstant, '2026-11-26T00:00:00.000+09:00');
  assert.equal(statement.header.lastInstant, '2026-11-26T23:59:59.999+09:00');
  assert.equal(Date.parse(statement.header.firstInstant), Date.parse(statement.header.from));
  assert.equal(Date.parse(statement.header.lastInstant) + 1, Date.parse(statement.header.to));
  const fallBack = statementDay('2026-11-01', 'America/New_York');
  assert.equal(zonedIsoTime(fallBack.startMs, 'America/New_York'), '2026-11-01T00:00:00.000-04:00');
  assert.equal(zonedIsoTime(fallBack.endMs - 1, 'America/New_York'), '2026-11-01T23:59:59.999-05:00');
  assert.equal(zonedIsoTime(Date.UTC(2026, 10, 26, 3, 4, 5, 6), 'UTC'), '2026-11-26T03:04:05.006+00:00');
});

// Blocks 1–9 in the day (60 s apart from its first second), block 0 the minute before it, block 10
// mined at the next day's first second and block 11 a minute later: the chain as far as `headAt`.
function dayChain(headAt: number): StatementChain {
  const endSec = day.endMs / 1000;
  const timestamp = (n: number) => (n === 0 ? daySec - 60 : n <= 9 ? daySec + (n - 1) * 60 : endSec + (n - 10) * 60);
  return {
    ...fakeChain([], { opening: 0n, closing: 0n }),
    head: async () => ({ number: headAt, timestamp: timestamp(headAt) }),
    timestampOf: async (n) => timestamp(n),
    firstBlockFrom: async (sec, head) => { for (let n = 0; n <= head; n++) if (timestamp(n) >= sec) return n; return head + 1; },
  };
}

test('the day\'s blocks are those mined from its first second to its last; it is closed once a block of the next day is mined, or a minute after midnight', async () => {
  const open = async (headAt: number, nowMs: number, closeGraceMs?: number) => (await openStatement({
    ...depsOf([], [], dayChain(headAt)), clock: () => nowMs, ...(closeGraceMs !== undefined && { closeGraceMs }),
  }, 'T-1', '2026-11-26')).header;
  // Blocks of the next day mined: the day ends at block 9, closed though midnight was a moment ago.
  assert.deepEqual(await open(11, day.endMs + 1).then((h) => [h.firstBlock, h.lastBlock, h.closed]), [1, 9, true]);
  assert.deepEqual(await open(10, day.endMs).then((h) => [h.lastBlock, h.closed]), [9, true], 'a block at the next day\'s first second closes it');
  // No block of the next day yet: open until a minute after midnight (closeGraceMs), closed from then.
  assert.deepEqual(await open(9, day.endMs + 59_999).then((h) => [h.lastBlock, h.closed]), [9, false]);
  assert.equal((await open(9, day.endMs + 60_000)).closed, true);
  assert.equal((await open(9, day.endMs - 1, 0)).closed, false, 'the day not over');
  assert.equal((await open(9, day.endMs, 0)).closed, true, 'no grace asked: closed at midnight');
  assert.equal((await open(5, day.startMs + 5 * 60_000)).lastBlock, 5, 'a day going on: its blocks so far');
});

test('a day is open from its first millisecond; before it, not found, naming the date', async () => {
  const deps = depsOf([], [], dayChain(0));
  assert.equal((await openStatement({ ...deps, clock: () => day.startMs }, 'T-1', '2026-11-26')).header.closed, false);
  await assert.rejects(openStatement({ ...deps, clock: () => day.startMs - 1 }, 'T-1', '2026-11-26'), (error: unknown) => {
    assert.ok(error instanceof DomainError);
    assert.deepEqual([error.code, error.details, error.message], ['request.not_found', 'date', '2026-11-26 has not begun (Asia/Seoul)']);
    return true;
  });
  await assert.rejects(openStatement({ ...deps, findStore: async () => undefined }, 'T-9', '2026-11-26'), { code: 'request.not_found', message: 'no such store' });
});
