import { formatTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { Clock } from '#shared/clock.ts';
import type { MinedTx, StatementRepository, StatementRow } from '../store/statement-repository.ts';
import type { StatementChain, TransferLog } from './statement-chain.ts';
import { localDateTime, statementDay, zonedIsoTime } from './statement-day.ts';
import {
  maxListedDiscrepancies, type Discrepancy, type OpenStatement, type StatementHeader, type StatementLine, type StatementSummary, type StatementToken,
} from './statement.ts';

export interface StatementDeps {
  repository: Pick<StatementRepository, 'minedTxs' | 'rowsOf'>;
  findStore(tid: string): Promise<{ tid: string; settlementAddress: string } | undefined>;
  /** The payment network's chain: payments, refunds and rewards all settle there. */
  chain: StatementChain;
  network: string;
  /** The tokens every statement counts (VIXP and the allow-list), and any other one by contract. */
  tokens(): Promise<StatementToken[]>;
  token(contractAddress: string): Promise<StatementToken>;
  clock: Clock;
  timeZone: string;
  /** Blocks read by the first step (later steps halve or double it to hold about `stepItems` records and logs). */
  stepBlocks?: number;
  /** A day is closed once a block of the next day is mined, or this long after midnight. */
  closeGraceMs?: number;
}

const maxTxsPerStep = 1_000;
/** Records and logs a step aims at: fewer, the next step reads twice the blocks; more than twice, half. */
const stepItems = 5_000;
const hashesPerQuery = 500;
const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * A store's statement of day `date` (docs/statements.md): the day's blocks found by their timestamps,
 * then walked in steps of blocks, each step reading the mined transactions, the store's records they
 * carry and the account's Transfer logs, matching each record to its log. Memory holds one step.
 */
export async function openStatement(deps: StatementDeps, tid: string, date: string): Promise<OpenStatement> {
  const day = statementDay(date, deps.timeZone);
  const now = deps.clock();
  if (day.startMs > now) throw new DomainError('request.not_found', `${date} has not begun (${deps.timeZone})`, { details: 'date' });
  const store = await deps.findStore(tid);
  if (!store) throw new DomainError('request.not_found', 'no such store');
  const { chain } = deps;
  const head = await chain.head();
  const endSec = Math.ceil(day.endMs / 1000);
  const firstBlock = await chain.firstBlockFrom(Math.ceil(day.startMs / 1000), head.number);
  const lastBlock = (await chain.firstBlockFrom(endSec, head.number)) - 1;
  const closed = head.timestamp >= endSec || now >= day.endMs + (deps.closeGraceMs ?? 60_000);
  const account = store.settlementAddress;
  const tokens = new Map((await deps.tokens()).map((t) => [t.contractAddress.toLowerCase(), t]));
  const tokenOf = async (contract: string) => {
    let token = tokens.get(contract.toLowerCase());
    if (!token) tokens.set(contract.toLowerCase(), token = await deps.token(contract));
    return token;
  };
  const balancesAt = async (n: number) => new Map(await Promise.all([...tokens.values()].map(async (t) => [t.contractAddress.toLowerCase(), await chain.balanceOf(t.contractAddress, account, n)] as const)));
  const opening = await balancesAt(firstBlock - 1);
  const header: StatementHeader = {
    tid, date, timeZone: deps.timeZone, network: deps.network, account, from: new Date(day.startMs).toISOString(), to: new Date(day.endMs).toISOString(),
    firstInstant: zonedIsoTime(day.startMs, deps.timeZone), lastInstant: zonedIsoTime(day.endMs - 1, deps.timeZone),
    closed, firstBlock, lastBlock,
    openingBalances: [...tokens.values()].map((t) => ({ token: t.symbol, tokenContract: t.contractAddress, balance: formatTokenAmount(opening.get(t.contractAddress.toLowerCase()) ?? 0n, t.decimals) })),
  };

  async function* lines(): AsyncGenerator<StatementLine, StatementSummary> {
    const totals = new Map<string, { kind: StatementRow['kind']; contract: string; count: number; amount: bigint }>();
    const net = new Map<string, bigint>();
    const unexplained = new Map<string, bigint>();
    const discrepancies: Discrepancy[] = [];
    let discrepancyCount = 0;
    const note = (d: Discrepancy) => { discrepancyCount++; if (discrepancies.length < maxListedDiscrepancies) discrepancies.push(d); };
    let step = deps.stepBlocks ?? 64;
    for (let from = firstBlock; from <= lastBlock;) {
      const to = Math.min(lastBlock, from + step - 1);
      const txs = await deps.repository.minedTxs(deps.network, from, to);
      if (txs.length > maxTxsPerStep && to > from) { step = Math.max(1, Math.floor(step / 2)); continue; }
      const rows: StatementRow[] = [];
      for (let i = 0; i < txs.length; i += hashesPerQuery) rows.push(...await deps.repository.rowsOf(tid, txs.slice(i, i + hashesPerQuery).map((t) => t.txHash)));
      for (const row of rows) await tokenOf(row.contractAddress);
      const logs = await chain.transfers([...tokens.keys()], account, from, to);
      const stepLines = await matchStep({ rows, logs, txs, account, tokenOf, timestampOf: chain.timestampOf, timeZone: deps.timeZone });
      for (const { line, row, log } of stepLines) {
        if (row) {
          const key = `${row.kind}:${row.contractAddress.toLowerCase()}`;
          const total = totals.get(key) ?? { kind: row.kind, contract: row.contractAddress.toLowerCase(), count: 0, amount: 0n };
          const signed = incoming(row) ? BigInt(row.tokenAmount) : -BigInt(row.tokenAmount);
          total.count++;
          total.amount += signed;
          totals.set(key, total);
          net.set(total.contract, (net.get(total.contract) ?? 0n) + signed);
          if (!line.reconciled) note({ type: 'line_without_log', kind: row.kind, reference: row.reference, txHash: row.txHash });
        } else if (log) {
          const contract = log.token.toLowerCase();
          unexplained.set(contract, (unexplained.get(contract) ?? 0n) + (same(log.to, account) ? log.value : 0n) - (same(log.from, account) ? log.value : 0n));
          note({ type: 'unexplained_transfer', txHash: log.txHash, logIndex: log.logIndex, token: line.token, from: log.from, to: log.to, amount: line.amount.replace(/^-/, '') });
        }
        yield line;
      }
      from = to + 1;
      step = nextStepBlocks(step, { txs: txs.length, records: rows.length, logs: logs.length });
    }
    const closing = await balancesAt(lastBlock);
    // A token first seen in a line (not on the allow-list any more) has its opening read now.
    for (const t of tokens.values()) {
      const key = t.contractAddress.toLowerCase();
      if (!opening.has(key)) opening.set(key, await chain.balanceOf(t.contractAddress, account, firstBlock - 1));
    }
    const balances = [...tokens.values()].map((t) => {
      const key = t.contractAddress.toLowerCase();
      const [o, c, n, u] = [opening.get(key) ?? 0n, closing.get(key) ?? 0n, net.get(key) ?? 0n, unexplained.get(key) ?? 0n];
      const f = (v: bigint) => formatTokenAmount(v, t.decimals);
      // What the unexplained transfers moved is listed with them; a mismatch is what not even a Transfer log shows.
      if (c !== o + n + u) note({ type: 'balance_mismatch', token: t.symbol, expected: f(o + n + u), actual: f(c), difference: f(c - o - n - u) });
      return { token: t.symbol, tokenContract: t.contractAddress, opening: f(o), net: f(n), unexplained: f(u), closing: f(c), difference: f(c - o - n) };
    });
    const symbolOf = (contract: string) => tokens.get(contract)?.symbol ?? contract;
    const decimalsOf = (contract: string) => tokens.get(contract)?.decimals ?? 0;
    return {
      totals: [...totals.values()].map((t) => ({ kind: t.kind, token: symbolOf(t.contract), count: t.count, amount: formatTokenAmount(t.amount, decimalsOf(t.contract)) })),
      net: [...net.entries()].map(([contract, amount]) => ({ token: symbolOf(contract), amount: formatTokenAmount(amount, decimalsOf(contract)) })),
      balances, reconciled: discrepancyCount === 0, discrepancyCount, discrepancies,
    };
  }
  return { header, lines };
}

/**
 * The blocks of the step after one of `step` blocks that read `read`: half (at least 1) after more than
 * twice `stepItems` records and logs or more than 500 transactions; twice (at most 8,192) after fewer
 * than `stepItems` records and logs and fewer than 250 transactions; else the same.
 */
export function nextStepBlocks(step: number, read: { txs: number; records: number; logs: number }): number {
  const items = read.records + read.logs;
  if (items > 2 * stepItems || read.txs > maxTxsPerStep / 2) return Math.max(1, Math.floor(step / 2));
  if (items < stepItems && read.txs < maxTxsPerStep / 4) return Math.min(step * 2, 8192);
  return step;
}

const incoming = (row: StatementRow) => row.kind === 'payment' || row.kind === 'reward_cancellation' || row.kind === 'x402';

interface StepInput {
  rows: StatementRow[];
  logs: TransferLog[];
  txs: MinedTx[];
  account: string;
  tokenOf(contract: string): Promise<StatementToken>;
  timestampOf(block: number): Promise<number>;
  timeZone: string;
}

/** Each record of a step with the Transfer log that carries it, and each log no record explains, in chain order. */
async function matchStep(input: StepInput): Promise<Array<{ line: StatementLine; row?: StatementRow; log?: TransferLog; order: number[] }>> {
  const { account } = input;
  const position = new Map(input.txs.map((t) => [t.txHash.toLowerCase(), t]));
  const logsOf = new Map<string, TransferLog[]>();
  for (const log of input.logs) logsOf.set(log.txHash.toLowerCase(), [...(logsOf.get(log.txHash.toLowerCase()) ?? []), log]);
  const used = new Set<TransferLog>();
  const timeOf = async (tx: MinedTx | undefined, block: number) => (tx?.blockTimestamp ?? await input.timestampOf(block)) * 1000;
  // The lines of a block share its time: formatted once.
  const local = new Map<number, string>();
  const localTime = (ms: number) => {
    let text = local.get(ms);
    if (text === undefined) local.set(ms, text = localDateTime(ms, input.timeZone));
    return text;
  };
  const out: Array<{ line: StatementLine; row?: StatementRow; log?: TransferLog; order: number[] }> = [];
  for (const row of input.rows) {
    const tx = position.get(row.txHash.toLowerCase());
    if (!tx) continue;
    const [from, to] = incoming(row) ? [row.counterparty, account] : [account, row.counterparty];
    const log = (logsOf.get(row.txHash.toLowerCase()) ?? []).find((l) => !used.has(l) && same(l.token, row.contractAddress)
      && same(l.from, from) && same(l.to, to) && l.value === BigInt(row.tokenAmount));
    if (log) used.add(log);
    const token = await input.tokenOf(row.contractAddress);
    const ms = await timeOf(tx, tx.blockNumber);
    out.push({
      row, order: [tx.blockNumber, tx.txIndex, log?.logIndex ?? Number.MAX_SAFE_INTEGER],
      line: {
        time: new Date(ms).toISOString(), localTime: localTime(ms), kind: row.kind, reference: row.reference, approvalNo: row.approvalNo,
        amount: formatTokenAmount(incoming(row) ? BigInt(row.tokenAmount) : -BigInt(row.tokenAmount), token.decimals), token: token.symbol,
        tokenContract: token.contractAddress, exchangeAmount: row.exchangeAmount, exchangeCurrency: row.exchangeCurrency, exchangeRate: row.exchangeRate,
        counterparty: row.counterparty, txHash: row.txHash, blockNumber: tx.blockNumber, logIndex: log?.logIndex ?? null, reconciled: log !== undefined,
      },
    });
  }
  for (const log of input.logs) {
    if (used.has(log)) continue;
    const token = await input.tokenOf(log.token);
    const ms = await timeOf(position.get(log.txHash.toLowerCase()), log.blockNumber);
    const into = same(log.to, account);
    const value = into && same(log.from, account) ? 0n : into ? log.value : -log.value;
    out.push({
      log, order: [log.blockNumber, log.txIndex, log.logIndex],
      line: {
        time: new Date(ms).toISOString(), localTime: localTime(ms), kind: 'unexplained', reference: '', approvalNo: null,
        amount: formatTokenAmount(value, token.decimals), token: token.symbol, tokenContract: token.contractAddress,
        exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: into ? log.from : log.to,
        txHash: log.txHash, blockNumber: log.blockNumber, logIndex: log.logIndex, reconciled: false,
      },
    });
  }
  const compare = (a: number[], b: number[]) => a.reduce((d, v, i) => d || v - (b[i] ?? 0), 0);
  return out.sort((a, b) => compare(a.order, b.order));
}
