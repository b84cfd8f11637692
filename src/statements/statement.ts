import type { StatementLineKind } from '../store/statement-repository.ts';

/** A token the statement counts: its contract, symbol and decimals. */
export interface StatementToken {
  contractAddress: string;
  symbol: string;
  decimals: number;
}

/** What comes before the lines: whose day, which blocks, the opening balances. */
export interface StatementHeader {
  tid: string;
  date: string;
  timeZone: string;
  network: string;
  /** The store's settlement account. */
  account: string;
  /** ISO times (UTC) of the day's start and of the next day's start. */
  from: string;
  to: string;
  /** The day's first and last instants in `timeZone`, with its offset: `2026-11-26T00:00:00.000+09:00`, `…T23:59:59.999+09:00`. */
  firstInstant: string;
  lastInstant: string;
  /** False while the day is still running: the lines so far, and the balance at the latest block. */
  closed: boolean;
  /** The day's blocks, first to last (firstBlock > lastBlock: no block was mined that day). */
  firstBlock: number;
  lastBlock: number;
  /** Balances at the end of the block before the day's first (token units). */
  openingBalances: Array<{ token: string; tokenContract: string; balance: string }>;
}

/** A line: one transfer of the store's account, in chain order. `unexplained`: a transfer no record explains. */
export interface StatementLine {
  /** ISO time of its block, and the same in the platform's time zone. */
  time: string;
  localTime: string;
  kind: StatementLineKind | 'unexplained';
  /** tran_no, reward_id, or `<payer>/<nonce>` of an x402 payment; empty for an unexplained transfer. */
  reference: string;
  approvalNo: string | null;
  /** Signed token units: money in is positive, out negative. */
  amount: string;
  token: string;
  tokenContract: string;
  exchangeAmount: string | null;
  exchangeCurrency: string | null;
  exchangeRate: string | null;
  /** The other side of the transfer. */
  counterparty: string;
  txHash: string;
  blockNumber: number;
  /** The Transfer log's index in its block; null when the transaction carries no such log. */
  logIndex: number | null;
  /** The line's Transfer log was found (from, to and value as recorded). */
  reconciled: boolean;
}

export type Discrepancy =
  | { type: 'line_without_log'; kind: StatementLineKind; reference: string; txHash: string }
  | { type: 'unexplained_transfer'; txHash: string; logIndex: number; token: string; from: string; to: string; amount: string }
  | { type: 'balance_mismatch'; token: string; expected: string; actual: string; difference: string };

/** What comes after the lines: totals, balances and the reconciliation's verdict. */
export interface StatementSummary {
  totals: Array<{ kind: StatementLineKind; token: string; count: number; amount: string }>;
  net: Array<{ token: string; amount: string }>;
  /**
   * Per token: opening + net of the lines = closing when `difference` (closing − opening − net) is 0.
   * `unexplained`: what the transfers no line explains moved (they make up the difference, or not).
   */
  balances: Array<{ token: string; tokenContract: string; opening: string; net: string; unexplained: string; closing: string; difference: string }>;
  reconciled: boolean;
  discrepancyCount: number;
  /** The first `maxListedDiscrepancies`; `discrepancyCount` counts them all. */
  discrepancies: Discrepancy[];
}

export const maxListedDiscrepancies = 1000;

/** A statement being read: its header at once, its lines streamed, the summary once they are all read. */
export interface OpenStatement {
  header: StatementHeader;
  lines(): AsyncGenerator<StatementLine, StatementSummary>;
}
