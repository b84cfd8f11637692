import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextStepBlocks, openStatement, type StatementDeps } from './statement-builder.ts';
import { statementDay } from './statement-day.ts';
import type { StatementChain, TransferLog } from './statement-chain.ts';
import type { MinedTx, StatementRow } from '../store/statement-repository.ts';
import type { StatementLine, StatementSummary } from './statement.ts';

// The steps a day is read in (docs/statements.md), at their bounds: a step of exactly 1,000
// transactions over several blocks, and the next step's size at the bounds on records and logs
// (5,000 and 10,000), which a whole statement would reach only by matching thousands of lines. Kept
// apart so that the statements mutation area's increments rerun only the mutants these reach.
const account = '0x00000000000000000000000000000000000000aa';
const user = '0x00000000000000000000000000000000000000bb';
const token = { contractAddress: '0x00000000000000000000000000000000000000cc', symbol: 'VIXP', decimals: 0 };
const day = statementDay('2026-11-26', 'Asia/Seoul');
const daySec = day.startMs / 1000;

test('the next step: half after more than 10,000 records and logs or more than 500 transactions; twice after fewer than 5,000 and fewer than 250; else the same', () => {
  const next = (records: number, logs: number, txs: number, step = 64) => nextStepBlocks(step, { txs, records, logs });
  // Records and logs count together.
  assert.equal(next(10_001, 0, 0), 32);
  assert.equal(next(0, 10_001, 0), 32);
  assert.equal(next(5_000, 5_001, 0), 32);
  assert.equal(next(5_000, 5_000, 0), 64);
  assert.equal(next(10_000, 0, 0), 64);
  assert.equal(next(5_000, 0, 0), 64);
  assert.equal(next(0, 5_000, 0), 64);
  assert.equal(next(2_500, 2_499, 0), 128);
  assert.equal(next(4_999, 0, 0), 128);
  assert.equal(next(0, 0, 0), 128);
  // Transactions.
  assert.equal(next(0, 0, 501), 32);
  assert.equal(next(0, 0, 500), 64);
  assert.equal(next(0, 0, 250), 64);
  assert.equal(next(0, 0, 249), 128);
  assert.equal(next(4_999, 0, 250), 64, 'few records, but 250 transactions: the same');
  assert.equal(next(10_001, 0, 249), 32, 'few transactions, but more than 10,000 records and logs: half');
  // Never below 1 block, never above 8,192.
  assert.equal(next(10_001, 0, 0, 1), 1);
  assert.equal(next(0, 0, 501, 3), 1);
  assert.equal(next(0, 0, 0, 4_096), 8_192);
  assert.equal(next(0, 0, 0, 8_192), 8_192);
});

test('a step of exactly 1,000 transactions over two blocks is read once, not again in halves', async () => {
  // Blocks 10 (600 transactions) and 11 (400), one of them the store's payment, in the first step of 64 blocks.
  const txs: MinedTx[] = [[10, 600], [11, 400]].flatMap(([block, count]) =>
    Array.from({ length: count! }, (_, i) => ({ txHash: `0x${block!.toString(16)}${i.toString(16).padStart(4, '0')}`, blockNumber: block!, txIndex: i, blockTimestamp: null })));
  const paid = txs.at(-1)!;
  const rows: StatementRow[] = [{
    kind: 'payment', sourceId: 'P1', reference: 'P1', approvalNo: null, txHash: paid.txHash, contractAddress: token.contractAddress, tokenSymbol: 'VIXP',
    tokenAmount: '7', exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: user,
  }];
  const logs: TransferLog[] = [{ token: token.contractAddress, from: user, to: account, value: 7n, txHash: paid.txHash, blockNumber: 11, txIndex: paid.txIndex, logIndex: 0 }];
  const timestamp = (n: number) => (n === 0 ? daySec - 60 : daySec + n * 60);
  const reads: Array<[number, number]> = [];
  const chain: StatementChain = {
    head: async () => ({ number: 100, timestamp: timestamp(100) }),
    timestampOf: async (n) => timestamp(n),
    firstBlockFrom: async (sec, head) => { for (let n = 0; n <= head; n++) if (timestamp(n) >= sec) return n; return head + 1; },
    balanceOf: async (_t, _a, n) => (n < 11 ? 0n : 7n),
    transfers: async (_t, _a, from, to) => logs.filter((l) => l.blockNumber >= from && l.blockNumber <= to),
  };
  const deps: StatementDeps = {
    repository: {
      minedTxs: async (_network, from, to) => { reads.push([from, to]); return txs.filter((t) => t.blockNumber >= from && t.blockNumber <= to); },
      rowsOf: async (_tid, hashes) => rows.filter((r) => hashes.includes(r.txHash)),
    },
    findStore: async (tid) => ({ tid, settlementAddress: account }),
    chain, network: 'ethereum', tokens: async () => [token], token: async () => token,
    clock: () => day.endMs + 3_600_000, timeZone: 'Asia/Seoul',
  };
  const iterator = (await openStatement(deps, 'T-1', '2026-11-26')).lines();
  const lines: StatementLine[] = [];
  let summary: StatementSummary | undefined;
  for (let next = await iterator.next(); !summary; next = await iterator.next()) {
    if (next.done) summary = next.value;
    else lines.push(next.value);
  }
  assert.deepEqual(lines.map((l) => [l.reference, l.blockNumber, l.amount, l.reconciled]), [['P1', 11, '7', true]]);
  assert.equal(summary.reconciled, true);
  // 1,000 transactions: read once; more than 500, so the next step is half (32 blocks); then none, twice again.
  assert.deepEqual(reads, [[1, 64], [65, 96], [97, 100]]);
});
