import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '#shared/errors.ts';
import { openStatement, type StatementDeps } from './statement-builder.ts';
import { statementDay } from './statement-day.ts';
import { statementCsv } from './statement-render.ts';
import type { StatementChain, TransferLog } from './statement-chain.ts';
import type { MinedTx, StatementRow } from '../store/statement-repository.ts';
import type { OpenStatement, StatementHeader, StatementLine, StatementSummary } from './statement.ts';

// Edges of a statement (docs/statements.md) beside statement-lines.test.ts: the day's last block read
// alone, a mismatch over a non-zero opening, an unexplained log's time from the journal, a bad date's
// field, a day of one block. Kept apart so that the statements mutation area's increments rerun only
// the mutants these reach.
const account = '0x00000000000000000000000000000000000000aa';
const user = '0x00000000000000000000000000000000000000bb';
const token = { contractAddress: '0x00000000000000000000000000000000000000cc', symbol: 'VIXP', decimals: 0 };
const day = statementDay('2026-11-26', 'Asia/Seoul');
const daySec = day.startMs / 1000;

function deps(txs: MinedTx[], rows: StatementRow[], logs: TransferLog[], balance: (n: number) => bigint, headNumber = 10): StatementDeps {
  const timestamp = (n: number) => (n === 0 ? daySec - 60 : daySec + n * 60);
  const chain: StatementChain = {
    head: async () => ({ number: headNumber, timestamp: timestamp(headNumber) }),
    timestampOf: async (n) => timestamp(n),
    firstBlockFrom: async (sec, head) => { for (let n = 0; n <= head; n++) if (timestamp(n) >= sec) return n; return head + 1; },
    balanceOf: async (_t, _a, n) => balance(n),
    transfers: async (_t, _a, from, to) => logs.filter((l) => l.blockNumber >= from && l.blockNumber <= to),
  };
  return {
    repository: {
      minedTxs: async (_network, from, to) => txs.filter((t) => t.blockNumber >= from && t.blockNumber <= to),
      rowsOf: async (_tid, hashes) => rows.filter((r) => hashes.includes(r.txHash)),
    },
    findStore: async (tid) => ({ tid, settlementAddress: account }),
    chain, network: 'ethereum', tokens: async () => [token], token: async () => token,
    clock: () => day.endMs + 3_600_000, timeZone: 'Asia/Seoul', stepBlocks: 1,
  };
}

async function read(d: StatementDeps): Promise<{ lines: StatementLine[]; summary: StatementSummary }> {
  const iterator = (await openStatement(d, 'T-1', '2026-11-26')).lines();
  const lines: StatementLine[] = [];
  for (let next = await iterator.next(); ; next = await iterator.next()) {
    if (next.done) return { lines, summary: next.value };
    lines.push(next.value);
  }
}

const payment = (txHash: string, amount: number): StatementRow => ({
  kind: 'payment', sourceId: txHash, reference: txHash, approvalNo: null, txHash, contractAddress: token.contractAddress, tokenSymbol: 'VIXP',
  tokenAmount: String(amount), exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: user,
});
const log = (txHash: string, blockNumber: number, value: bigint): TransferLog => ({ token: token.contractAddress, from: user, to: account, value, txHash, blockNumber, txIndex: 0, logIndex: 0 });

test('the day\'s last block is read, also when a step of its own reads it', async () => {
  // Steps of 1, 2 and 4 blocks (1, 2–3, 4–7) leave block 8, the day's last so far, to a step of its own.
  const { lines, summary } = await read(deps([{ txHash: '0x0a', blockNumber: 8, txIndex: 0, blockTimestamp: null }], [payment('0x0a', 4)], [log('0x0a', 8, 4n)], (n) => (n < 8 ? 0n : 4n), 8));
  assert.deepEqual(lines.map((l) => [l.reference, l.blockNumber, l.reconciled]), [['0x0a', 8, true]]);
  assert.equal(summary.reconciled, true);
});

test('a balance no log explains over a non-zero opening: the mismatch is the closing less what was expected', async () => {
  const { summary } = await read(deps([], [], [], (n) => (n < 1 ? 100n : 97n)));
  assert.deepEqual(summary.discrepancies, [{ type: 'balance_mismatch', token: 'VIXP', expected: '100', actual: '97', difference: '-3' }]);
});

test('an unexplained log of a journaled transaction takes the journal\'s block time', async () => {
  const at = daySec + 3_600;
  const { lines } = await read(deps([{ txHash: '0x0b', blockNumber: 2, txIndex: 0, blockTimestamp: at }], [], [log('0x0b', 2, 1n)], (n) => (n < 1 ? 0n : 1n)));
  assert.deepEqual(lines.map((l) => [l.kind, l.time]), [['unexplained', new Date(at * 1000).toISOString()]]);
});

test('a date that is not a calendar day is refused naming the field', () => {
  assert.throws(() => statementDay('2026-02-30', 'Asia/Seoul'), (error: unknown) => error instanceof DomainError && error.code === 'request.invalid' && error.details === 'date');
});

test('a day of one block: its closing balance is at that block', async () => {
  const header = { tid: 'T-1', date: '2026-11-26', timeZone: 'UTC', network: 'ethereum', account, from: 'a', to: 'b', firstInstant: 'c', lastInstant: 'd', closed: true, firstBlock: 5, lastBlock: 5, openingBalances: [] } satisfies StatementHeader;
  const summary: StatementSummary = { totals: [], net: [], balances: [{ token: 'VIXP', tokenContract: token.contractAddress, opening: '1', net: '0', unexplained: '0', closing: '1', difference: '0' }], reconciled: true, discrepancyCount: 0, discrepancies: [] };
  const statement: OpenStatement = { header, async *lines() { yield* []; return summary; } };
  let csv = '';
  for await (const piece of statementCsv(statement)) csv += piece;
  assert.ok(csv.includes(`,closing_balance,,,1,VIXP,${token.contractAddress},,,,,,5,,true\r\n`), csv);
});
