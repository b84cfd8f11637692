import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openStatement, type StatementDeps } from './statement-builder.ts';
import { statementDay } from './statement-day.ts';
import type { StatementChain, TransferLog } from './statement-chain.ts';
import type { MinedTx, StatementRow } from '../store/statement-repository.ts';
import type { OpenStatement, StatementLine, StatementSummary, StatementToken } from './statement.ts';
import { batched, csvField, statementCsv, statementJson } from './statement-render.ts';

// A statement's lines and summary for every kind of record, every direction of Transfer log, a token
// first seen in a line, block times from the journal, and the steps a busy day is read in
// (docs/statements.md), over in-memory records and a chain of `blocks` blocks in the day.
const account = '0x00000000000000000000000000000000000000aa';
const user = '0x00000000000000000000000000000000000000bb';
const stranger = '0x00000000000000000000000000000000000000dd';
const vixp: StatementToken = { contractAddress: '0x00000000000000000000000000000000000000cc', symbol: 'VIXP', decimals: 18 };
const usdc: StatementToken = { contractAddress: '0x00000000000000000000000000000000000000Ee', symbol: 'USDC', decimals: 6 };
const day = statementDay('2026-11-26', 'Asia/Seoul');
const daySec = day.startMs / 1000;
const unit = 10n ** 18n;

interface World {
  txs: MinedTx[];
  rows: StatementRow[];
  logs: TransferLog[];
  /** Balance of `token` (lower-case contract) at block n. */
  balance(token: string, n: number): bigint;
  blocks?: number;
  tokens?: StatementToken[];
  stepBlocks?: number;
}

function depsOf(world: World) {
  const blocks = world.blocks ?? 10;
  const timestamp = (n: number) => (n === 0 ? daySec - 60 : daySec + n * 60);
  const calls = { minedTxs: [] as Array<[number, number]>, rowsOf: [] as number[], token: [] as string[] };
  const chain: StatementChain = {
    head: async () => ({ number: blocks, timestamp: timestamp(blocks) }),
    timestampOf: async (n) => timestamp(n),
    firstBlockFrom: async (sec, head) => { for (let n = 0; n <= head; n++) if (timestamp(n) >= sec) return n; return head + 1; },
    balanceOf: async (token, _account, n) => world.balance(token.toLowerCase(), n),
    transfers: async (tokens, _account, from, to) => world.logs.filter((l) => tokens.includes(l.token.toLowerCase()) && l.blockNumber >= from && l.blockNumber <= to),
  };
  const deps: StatementDeps = {
    repository: {
      minedTxs: async (_network, from, to) => { calls.minedTxs.push([from, to]); return world.txs.filter((t) => t.blockNumber >= from && t.blockNumber <= to); },
      rowsOf: async (_tid, hashes) => { calls.rowsOf.push(hashes.length); return world.rows.filter((r) => hashes.includes(r.txHash)); },
    },
    findStore: async (tid) => ({ tid, settlementAddress: account }),
    chain, network: 'ethereum',
    tokens: async () => world.tokens ?? [vixp],
    token: async (contract) => { calls.token.push(contract); return [vixp, usdc].find((t) => t.contractAddress.toLowerCase() === contract.toLowerCase())!; },
    clock: () => day.endMs + 3_600_000, timeZone: 'Asia/Seoul', ...(world.stepBlocks && { stepBlocks: world.stepBlocks }),
  };
  return { deps, calls };
}

async function read(deps: StatementDeps): Promise<{ lines: StatementLine[]; summary: StatementSummary }> {
  const statement = await openStatement(deps, 'T-1', '2026-11-26');
  const lines: StatementLine[] = [];
  const iterator = statement.lines();
  for (let next = await iterator.next(); ; next = await iterator.next()) {
    if (next.done) return { lines, summary: next.value };
    lines.push(next.value);
  }
}

const tx = (txHash: string, blockNumber: number, blockTimestamp: number | null = null): MinedTx => ({ txHash, blockNumber, txIndex: 0, blockTimestamp });
const row = (kind: StatementRow['kind'], reference: string, txHash: string, amount: bigint, token = vixp): StatementRow => ({
  kind, sourceId: reference, reference, approvalNo: `A-${reference}`, txHash, contractAddress: token.contractAddress, tokenSymbol: token.symbol,
  tokenAmount: amount.toString(), exchangeAmount: '1000', exchangeCurrency: 'KRW', exchangeRate: '1000', counterparty: user,
});
const log = (txHash: string, blockNumber: number, logIndex: number, value: bigint, from: string, to: string, token = vixp): TransferLog => ({
  token: token.contractAddress, from, to, value, txHash, blockNumber, txIndex: 0, logIndex,
});

test('money in (payment, reward given back, x402) and out (refund, reward paid): each matched to its own Transfer log, totals and net per kind', async () => {
  const txs = [tx('0x01', 2), tx('0x02', 3), tx('0x03', 4), tx('0x04', 5), tx('0x05', 6)];
  const rows = [row('payment', 'P1', '0x01', 5n * unit), row('refund', 'R1', '0x02', 2n * unit), row('reward', 'W1', '0x03', 1n * unit),
    row('reward_cancellation', 'C1', '0x04', 1n * unit), row('x402', 'X1', '0x05', 3n * unit), row('payment', 'P2', '0x05', 4n * unit)];
  const logs = [log('0x01', 2, 0, 5n * unit, user, account), log('0x02', 3, 0, 2n * unit, account, user), log('0x03', 4, 0, 1n * unit, account, user),
    log('0x04', 5, 0, 1n * unit, user, account), log('0x05', 6, 0, 4n * unit, user, account), log('0x05', 6, 1, 3n * unit, user, account)];
  const { lines, summary } = await read(depsOf({ txs, rows, logs, balance: (_t, n) => (n < 1 ? 10n * unit : 20n * unit) }).deps);
  assert.deepEqual(lines.map((l) => [l.kind, l.reference, l.amount, l.logIndex, l.reconciled, l.counterparty]), [
    ['payment', 'P1', '5', 0, true, user], ['refund', 'R1', '-2', 0, true, user], ['reward', 'W1', '-1', 0, true, user],
    ['reward_cancellation', 'C1', '1', 0, true, user], ['payment', 'P2', '4', 0, true, user], ['x402', 'X1', '3', 1, true, user],
  ]);
  assert.deepEqual(lines.map((l) => [l.approvalNo, l.token, l.tokenContract, l.exchangeAmount, l.exchangeCurrency, l.exchangeRate, l.blockNumber, l.txHash]).at(0),
    ['A-P1', 'VIXP', vixp.contractAddress, '1000', 'KRW', '1000', 2, '0x01']);
  assert.deepEqual(summary.totals, [
    { kind: 'payment', token: 'VIXP', count: 2, amount: '9' }, { kind: 'refund', token: 'VIXP', count: 1, amount: '-2' },
    { kind: 'reward', token: 'VIXP', count: 1, amount: '-1' }, { kind: 'reward_cancellation', token: 'VIXP', count: 1, amount: '1' },
    { kind: 'x402', token: 'VIXP', count: 1, amount: '3' },
  ]);
  assert.deepEqual(summary.net, [{ token: 'VIXP', amount: '10' }]);
  assert.deepEqual(summary.balances, [{ token: 'VIXP', tokenContract: vixp.contractAddress, opening: '10', net: '10', unexplained: '0', closing: '20', difference: '0' }]);
  assert.deepEqual([summary.reconciled, summary.discrepancyCount, summary.discrepancies], [true, 0, []]);
});

test('a record whose log went the other way is not matched to it: a refund paid into the account is a line without its log and an unexplained transfer', async () => {
  const { lines, summary } = await read(depsOf({
    txs: [tx('0x02', 3)], rows: [row('refund', 'R1', '0x02', 2n * unit)], logs: [log('0x02', 3, 0, 2n * unit, user, account)],
    balance: (_t, n) => (n < 1 ? 10n * unit : 12n * unit),
  }).deps);
  assert.deepEqual(lines.map((l) => [l.kind, l.amount, l.reconciled]), [['unexplained', '2', false], ['refund', '-2', false]]);
  assert.deepEqual(summary.discrepancies.map((d) => d.type), ['unexplained_transfer', 'line_without_log', 'balance_mismatch']);
  assert.deepEqual(summary.discrepancies[1], { type: 'line_without_log', kind: 'refund', reference: 'R1', txHash: '0x02' });
  assert.equal(summary.reconciled, false);
});

test('unexplained logs: in (from its sender), out (negative, to its receiver), the account to itself (0); each listed, the balance explained by them', async () => {
  const logs = [log('0x0a', 2, 3, 3n * unit, stranger, account), log('0x0b', 4, 1, 2n * unit, account, stranger), log('0x0c', 5, 0, 7n * unit, account, account)];
  const { lines, summary } = await read(depsOf({ txs: [], rows: [], logs, balance: (_t, n) => (n < 1 ? 10n * unit : 11n * unit) }).deps);
  assert.deepEqual(lines.map((l) => [l.kind, l.amount, l.counterparty, l.logIndex, l.blockNumber, l.reference, l.approvalNo, l.exchangeAmount]), [
    ['unexplained', '3', stranger, 3, 2, '', null, null], ['unexplained', '-2', stranger, 1, 4, '', null, null], ['unexplained', '0', account, 0, 5, '', null, null],
  ]);
  assert.deepEqual(summary.discrepancies, [
    { type: 'unexplained_transfer', txHash: '0x0a', logIndex: 3, token: 'VIXP', from: stranger, to: account, amount: '3' },
    { type: 'unexplained_transfer', txHash: '0x0b', logIndex: 1, token: 'VIXP', from: account, to: stranger, amount: '2' },
    { type: 'unexplained_transfer', txHash: '0x0c', logIndex: 0, token: 'VIXP', from: account, to: account, amount: '0' },
  ]);
  // Closing 11 = opening 10 + 3 − 2: what the logs moved, listed with them; no mismatch.
  assert.deepEqual(summary.balances, [{ token: 'VIXP', tokenContract: vixp.contractAddress, opening: '10', net: '0', unexplained: '1', closing: '11', difference: '1' }]);
  assert.deepEqual([summary.reconciled, summary.discrepancyCount], [false, 3]);
});

test('block times: the journal\'s where it has them, else the chain\'s; lines of one block in transaction then log order', async () => {
  const at = daySec + 3_600;
  const txs = [{ ...tx('0x01', 2, at), txIndex: 1 }, { ...tx('0x02', 2, at), txIndex: 0 }];
  const rows = [row('payment', 'P1', '0x01', 1n * unit), row('payment', 'P2', '0x02', 1n * unit)];
  const logs = [{ ...log('0x01', 2, 5, 1n * unit, user, account), txIndex: 1 }, log('0x02', 2, 4, 1n * unit, user, account), log('0x09', 3, 0, 1n * unit, stranger, account)];
  const { lines } = await read(depsOf({ txs, rows, logs, balance: (_t, n) => (n < 1 ? 0n : 3n * unit) }).deps);
  assert.deepEqual(lines.map((l) => [l.reference, l.time, l.localTime]), [
    ['P2', '2026-11-25T16:00:00.000Z', '2026-11-26 01:00:00'], ['P1', '2026-11-25T16:00:00.000Z', '2026-11-26 01:00:00'],
    ['', new Date((daySec + 180) * 1000).toISOString(), '2026-11-26 00:03:00'],
  ]);
});

test('a token first seen in a line (no longer on the allow-list): its own symbol and decimals, its opening balance read, asked for once', async () => {
  const key = usdc.contractAddress.toLowerCase();
  const txs = [tx('0x01', 2), tx('0x02', 3)];
  // The records name the contract in another case than the logs.
  const rows = [row('payment', 'P1', '0x01', 1_500_000n, { ...usdc, contractAddress: key }), row('payment', 'P2', '0x02', 500_000n, usdc)];
  const logs = [log('0x01', 2, 0, 1_500_000n, user, account, usdc), log('0x02', 3, 0, 500_000n, user, account, usdc)];
  const balance = (token: string, n: number) => (token === key ? (n < 1 ? 1_000_000n : 3_000_000n) : 5n * unit);
  const { deps, calls } = depsOf({ txs, rows, logs, balance });
  const statement = await openStatement(deps, 'T-1', '2026-11-26');
  assert.deepEqual(statement.header.openingBalances, [{ token: 'VIXP', tokenContract: vixp.contractAddress, balance: '5' }]);
  const { lines, summary } = await read(deps);
  assert.deepEqual(lines.map((l) => [l.amount, l.token]), [['1.5', 'USDC'], ['0.5', 'USDC']]);
  assert.deepEqual(summary.totals, [{ kind: 'payment', token: 'USDC', count: 2, amount: '2' }]);
  assert.deepEqual(summary.balances.map((b) => [b.token, b.opening, b.net, b.closing, b.difference]), [['VIXP', '5', '0', '5', '0'], ['USDC', '1', '2', '3', '0']]);
  assert.equal(summary.reconciled, true);
  assert.deepEqual(calls.token, [key], 'asked once');
});

test('a busy day is read in steps of at most 1,000 transactions (a block is never split), halved after more than 500, doubled from 64 blocks after fewer than 250; records asked 500 hashes at a time', async () => {
  // Block 20: 250 transactions, 100: 500, 180: 501, 250: 1,001, 330: 1.
  const sizes: Array<[number, number]> = [[20, 250], [100, 500], [180, 501], [250, 1_001], [330, 1]];
  const txs = sizes.flatMap(([block, count]) => Array.from({ length: count }, (_, i) => ({ ...tx(`0x${block.toString(16)}${i.toString(16).padStart(4, '0')}`, block), txIndex: i })));
  const rows = txs.map((t) => row('payment', t.txHash, t.txHash, 1n));
  const logs = txs.map((t) => ({ ...log(t.txHash, t.blockNumber, t.txIndex, 1n, user, account), txIndex: t.txIndex }));
  const { deps, calls } = depsOf({ txs, rows, logs, blocks: 400, balance: (_t, n) => BigInt(txs.filter((t) => t.blockNumber <= n).length) });
  const { lines, summary } = await read(deps);
  assert.deepEqual(lines.map((l) => l.reference), txs.map((t) => t.txHash));
  assert.ok(lines.every((l) => l.reconciled));
  assert.equal(summary.reconciled, true);
  assert.deepEqual(calls.rowsOf, [250, 500, 500, 1, 500, 500, 1, 1]);
  // Each range read; one with more than 1,000 transactions and more than one block is read again in halves.
  assert.deepEqual(calls.minedTxs, [
    [1, 64], [65, 128], [129, 192], [193, 224], [225, 288], [225, 256], [225, 240], [241, 272], [241, 256], [241, 248], [249, 264],
    [249, 256], [249, 252], [249, 250], [249, 249], [250, 251], [250, 250], [251, 251], [252, 253], [254, 257], [258, 265], [266, 281],
    [282, 313], [314, 377], [378, 400],
  ]);
});

test('a day of more than 1,000 discrepancies counts them all and lists the first 1,000', async () => {
  const logs = Array.from({ length: 1_001 }, (_, i) => log(`0x${i.toString(16).padStart(4, '0')}`, 3, i, 1n, stranger, account));
  const { summary } = await read(depsOf({ txs: [], rows: [], logs, balance: (_t, n) => (n < 3 ? 0n : 1_001n) }).deps);
  assert.equal(summary.discrepancyCount, 1_001);
  assert.equal(summary.discrepancies.length, 1_000);
  assert.deepEqual(summary.discrepancies.at(-1), { type: 'unexplained_transfer', txHash: '0x03e7', logIndex: 999, token: 'VIXP', from: stranger, to: account, amount: '0.000000000000000001' });
});

// The statement as a reader gets it: the JSON document exactly as JSON.stringify writes it (compact,
// or indented by 2), and the CSV's summary rows.
const header = {
  tid: 'T-1', date: '2026-11-26', timeZone: 'Asia/Seoul', network: 'ethereum', account, from: 'a', to: 'b', firstInstant: 'c', lastInstant: 'd',
  closed: true, firstBlock: 5, lastBlock: 9, openingBalances: [],
};
const someLine = (reference: string): StatementLine => ({
  time: 't', localTime: '2026-11-26 10:00:00', kind: 'payment', reference, approvalNo: 'A1', amount: '2.5', token: 'VIXP', tokenContract: vixp.contractAddress,
  exchangeAmount: '2500', exchangeCurrency: 'KRW', exchangeRate: '1000', counterparty: user, txHash: '0x01', blockNumber: 6, logIndex: 0, reconciled: true,
});
const summaryOf: StatementSummary = {
  totals: [{ kind: 'payment', token: 'VIXP', count: 2, amount: '5' }], net: [{ token: 'VIXP', amount: '5' }],
  balances: [{ token: 'VIXP', tokenContract: vixp.contractAddress, opening: '1', net: '5', unexplained: '0', closing: '6.1', difference: '0.1' }],
  reconciled: false, discrepancyCount: 1, discrepancies: [{ type: 'balance_mismatch', token: 'VIXP', expected: '6', actual: '6.1', difference: '0.1' }],
};
const opened = (): OpenStatement => ({ header, async *lines() { yield someLine('P1'); yield someLine('P2'); return summaryOf; } });
async function text(pieces: AsyncIterable<string>): Promise<string> {
  let all = '';
  for await (const piece of pieces) all += piece;
  return all;
}

test('the JSON of a statement of two lines is exactly JSON.stringify\'s, compact and pretty', async () => {
  const whole = { ...header, lines: [someLine('P1'), someLine('P2')], ...summaryOf };
  assert.equal(await text(statementJson(opened())), JSON.stringify(whole));
  assert.equal(await text(statementJson(opened(), { pretty: true })), JSON.stringify(whole, null, 2));
});

test('the CSV\'s summary rows: totals counted in lines, a closing balance off by a difference and its mismatch not reconciled', async () => {
  const csv = await text(statementCsv(opened()));
  const rows = csv.split('\r\n');
  assert.deepEqual(rows.slice(3), [
    ',total_payment,2 lines,,5,VIXP,,,,,,,,,',
    ',net,,,5,VIXP,,,,,,,,,',
    `,closing_balance,,,6.1,VIXP,${vixp.contractAddress},,,,,,9,,false`,
    ',balance_mismatch,,,0.1,VIXP,,,,,,,,,false',
    ',statement,closed,,,,,,,,,,,,false',
    '',
  ]);
});

test('numbers and plain decimals are written as they are; text that is not a plain decimal goes through the formula rule', () => {
  assert.equal(csvField('-1.25'), '-1.25');
  assert.equal(csvField(-1e-7), '-1e-7');
  assert.equal(csvField(-1e21), '-1e+21');
  assert.equal(csvField('-1e-7'), `"'-1e-7"`);
});

test('batched: a chunk ends once it holds the size asked (64 KiB unless told)', async () => {
  async function* pieces(count: number, size: number) { for (let i = 0; i < count; i++) yield 'x'.repeat(size); }
  const lengths = async (chunks: AsyncIterable<string>) => { const all: number[] = []; for await (const c of chunks) all.push(c.length); return all; };
  assert.deepEqual(await lengths(batched(pieces(5, 3), 6)), [6, 6, 3]);
  assert.deepEqual(await lengths(batched(pieces(100, 1_000))), [66_000, 34_000]);
});
