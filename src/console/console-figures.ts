import { formatTokenAmount } from '#shared/amount.ts';
import type { Clock } from '#shared/clock.ts';
import type { ConsoleRepository, RelayerLaneRow, TokenAmountRow } from '../store/console-repository.ts';
import type { PaymentStatus } from '../store/schema.ts';
import { coinSymbol } from '#shared/networks.ts';
import { roundedForPerson, settlementCosts, startOfDay, type SettlementCosts } from './settlement-costs.ts';

export interface ConsoleFiguresDeps {
  repository: ConsoleRepository;
  tokenDecimals(network: string, contractAddress: string): Promise<number>;
  /** A store's settlement account balance of the payment token (token units), read on chain. */
  storeBalance(address: string): Promise<{ balance: string; token: string; network: string }>;
  /** A relayer's native balance (gas), read on chain, in ether units. */
  nativeBalance(network: string, address: string): Promise<string>;
  journalBacklog(): Promise<Record<string, number>>;
  /** Every network, in order. */
  networks: readonly string[];
  /** Every relayer lane's address, lane 0 (the platform account) first: each has one on every network. */
  relayerLanes: readonly string[];
  /** The platform's day (TIME_ZONE): settlement costs count from its start. */
  timeZone: string;
  /** The res_code a POS was answered for a payment's outcome (the transport's table). */
  resCodeOf(status: PaymentStatus, failureCode: string | null): { resCode: string; resMessage: string };
  clock: Clock;
}

export interface TokenTotal {
  network: string;
  token: string;
  contractAddress: string;
  /** Token units. */
  amount: string;
  count: number;
}

/** `GET /console/api/figures` (docs/console.md). */
export interface ConsoleFigures {
  generatedAt: string;
  /** The platform's zone (TIME_ZONE): the page shows every time in it, named. */
  timeZone: string;
  windowMinutes: number;
  payments: Record<PaymentStatus | 'total', number>;
  /** One entry per minute of the window, oldest first, zero-filled. */
  perMinute: Array<{ at: number; approved: number; failed: number; pending: number }>;
  byResCode: Array<{ resCode: string; resMessage: string; count: number }>;
  volume: TokenTotal[];
  refunds: { count: number; amounts: TokenTotal[] };
  rewards: { issued: number; claimed: number; canceled: number; open: number; claimedAmounts: TokenTotal[] };
  /** Payments of the x402 facilitator (docs/x402.md), apart from the POS payments above. */
  x402: { settled: number; pending: number; failed: number; settledAmounts: TokenTotal[] };
  stores: Array<{ tid: string; name: string; settlementAddress: string; approved: number; balance: string; token: string; network: string }>;
  /** Every lane on every network (lane 0: the platform account), and any other relayer of the journal. */
  relayers: Array<{ network: string; lane: number | null; address: string; pending: number; transactions: number; nativeBalance: string; balanceRounded: string }>;
  /** Per network, what settlement cost since the platform's day began. */
  settlementCosts: { since: string; timeZone: string; networks: SettlementCosts[] };
  journal: { backlog: Record<string, number>; total: number; oldestPendingAt: string | null; oldestPendingAgeSeconds: number | null };
  /** Today and yesterday in TIME_ZONE (the cards): the records created that day. The figures above are all-time. */
  days: { today: DayFigures; yesterday: DayFigures };
}

/** What one day of TIME_ZONE brought: the records created between its first and last instants. */
export interface DayFigures {
  /** `yyyy-mm-dd` in TIME_ZONE, and its start and the next day's start (ISO, UTC). */
  date: string;
  from: string;
  to: string;
  payments: Record<PaymentStatus | 'total', number>;
  volume: TokenTotal[];
  refunds: { count: number; amounts: TokenTotal[] };
  rewards: { issued: number; claimed: number; claimedAmounts: TokenTotal[] };
  x402: { settled: number; failed: number; settledAmounts: TokenTotal[] };
}

async function dayFigures(deps: ConsoleFiguresDeps, from: number, to: number): Promise<DayFigures> {
  const range = { from, to };
  const { repository: repo } = deps;
  const [outcomes, approved, refunds, rewards, x402] = await Promise.all([
    repo.paymentOutcomes(range), repo.approvedAmounts(range), repo.refundAmounts(range), repo.rewards(range), repo.x402Settlements(range),
  ]);
  const payments = { total: 0, approved: 0, failed: 0, pending: 0 };
  for (const o of outcomes) {
    payments[o.status] += o.count;
    payments.total += o.count;
  }
  const claimed = rewards.filter((r) => r.claimed);
  const settled = x402.filter((r) => r.status === 'settled');
  return {
    // en-CA writes a date as yyyy-mm-dd.
    date: new Intl.DateTimeFormat('en-CA', { timeZone: deps.timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(from), from: new Date(from).toISOString(), to: new Date(to).toISOString(),
    payments, volume: await totals(deps, approved), refunds: { count: refunds.length, amounts: await totals(deps, refunds) },
    rewards: { issued: rewards.length, claimed: claimed.length, claimedAmounts: await totals(deps, claimed) },
    x402: { settled: settled.length, failed: x402.filter((r) => r.status === 'failed').length, settledAmounts: await totals(deps, settled) },
  };
}

export const maxWindowMinutes = 24 * 60;

/** Sums base-unit amounts per token (bigint), formatted in token units. */
async function totals(deps: Pick<ConsoleFiguresDeps, 'tokenDecimals'>, rows: TokenAmountRow[]): Promise<TokenTotal[]> {
  const groups = new Map<string, { row: TokenAmountRow; sum: bigint; count: number }>();
  for (const row of rows) {
    const key = `${row.network}:${row.contractAddress.toLowerCase()}`;
    const group = groups.get(key) ?? { row, sum: 0n, count: 0 };
    group.sum += BigInt(row.tokenAmount);
    group.count += 1;
    groups.set(key, group);
  }
  return Promise.all([...groups.values()].map(async ({ row, sum, count }) => ({
    network: row.network, token: row.tokenSymbol, contractAddress: row.contractAddress,
    amount: formatTokenAmount(sum, await deps.tokenDecimals(row.network, row.contractAddress)), count,
  })));
}

/** Every figure of the console, from the store and (balances) from the chains. */
export async function consoleFigures(deps: ConsoleFiguresDeps, windowMinutes: number): Promise<ConsoleFigures> {
  const now = deps.clock();
  const firstMinute = Math.floor(now / 60_000) * 60_000 - (windowMinutes - 1) * 60_000;
  const { repository: repo } = deps;
  const dayStart = startOfDay(now, deps.timeZone);
  const [minutes, outcomes, approved, refunds, rewards, stores, lanes, oldest, backlog, mined, x402] = await Promise.all([
    repo.paymentsPerMinute(firstMinute), repo.paymentOutcomes(), repo.approvedAmounts(), repo.refundAmounts(), repo.rewards(),
    repo.stores(), repo.relayerLanes(), repo.oldestPendingOperation(), deps.journalBacklog(), repo.minedSince(deps.networks, dayStart),
    repo.x402Settlements(),
  ]);
  // Yesterday starts at the start of the day that holds the instant before today began.
  const yesterdayStart = startOfDay(dayStart - 1, deps.timeZone);
  const tomorrowStart = startOfDay(dayStart + 30 * 3_600_000, deps.timeZone);
  const [today, yesterday] = await Promise.all([dayFigures(deps, dayStart, tomorrowStart), dayFigures(deps, yesterdayStart, dayStart)]);

  const perMinute = Array.from({ length: windowMinutes }, (_, i) => ({ at: firstMinute + i * 60_000, approved: 0, failed: 0, pending: 0 }));
  for (const m of minutes) {
    const slot = perMinute[(m.minute - firstMinute) / 60_000];
    if (slot) slot[m.status] += m.count;
  }
  const payments = { total: 0, approved: 0, failed: 0, pending: 0 };
  const byCode = new Map<string, { resCode: string; resMessage: string; count: number }>();
  for (const o of outcomes) {
    payments[o.status] += o.count;
    payments.total += o.count;
    const code = deps.resCodeOf(o.status, o.failureCode);
    const entry = byCode.get(code.resCode) ?? { ...code, count: 0 };
    entry.count += o.count;
    byCode.set(code.resCode, entry);
  }

  const [storeRows, relayerRows] = await Promise.all([
    Promise.all(stores.map(async (s) => ({ ...s, ...(await deps.storeBalance(s.settlementAddress)) }))),
    Promise.all(everyLane(deps, lanes).map(async (l) => {
      const nativeBalance = await deps.nativeBalance(l.network, l.address);
      return { ...l, nativeBalance, balanceRounded: roundedForPerson(nativeBalance, coinSymbol(l.network)) };
    })),
  ]);
  const backlogTotal = Object.values(backlog).reduce((a, b) => a + b, 0);
  return {
    generatedAt: new Date(now).toISOString(),
    timeZone: deps.timeZone,
    windowMinutes,
    payments,
    perMinute,
    byResCode: [...byCode.values()].sort((a, b) => a.resCode.localeCompare(b.resCode)),
    volume: await totals(deps, approved),
    refunds: { count: refunds.length, amounts: await totals(deps, refunds) },
    rewards: {
      issued: rewards.length,
      claimed: rewards.filter((r) => r.claimed).length,
      canceled: rewards.filter((r) => r.status === 'canceled').length,
      open: rewards.filter((r) => r.status === 'issued').length,
      claimedAmounts: await totals(deps, rewards.filter((r) => r.claimed)),
    },
    x402: {
      settled: x402.filter((r) => r.status === 'settled').length,
      pending: x402.filter((r) => r.status === 'accepted').length,
      failed: x402.filter((r) => r.status === 'failed').length,
      settledAmounts: await totals(deps, x402.filter((r) => r.status === 'settled')),
    },
    stores: storeRows,
    relayers: relayerRows,
    settlementCosts: { since: new Date(dayStart).toISOString(), timeZone: deps.timeZone, networks: settlementCosts(deps.networks, mined) },
    journal: {
      backlog, total: backlogTotal,
      oldestPendingAt: oldest === undefined ? null : new Date(oldest).toISOString(),
      oldestPendingAgeSeconds: oldest === undefined ? null : Math.max(0, Math.round((now - oldest) / 1000)),
    },
    days: { today, yesterday },
  };
}

/**
 * Each configured lane on each network, with its journal counts (none yet: zeros), then any relayer
 * the journal knows that is no lane any more (RELAYER_LANES lowered): network by network, lane order.
 */
function everyLane(deps: Pick<ConsoleFiguresDeps, 'networks' | 'relayerLanes'>, journal: RelayerLaneRow[]) {
  const key = (network: string, address: string) => `${network}:${address.toLowerCase()}`;
  const counts = new Map(journal.map((row) => [key(row.network, row.relayer), row]));
  const laneOf = new Map(deps.relayerLanes.map((address, lane) => [address.toLowerCase(), lane]));
  const rows = deps.networks.flatMap((network) => deps.relayerLanes.map((address, lane) => {
    const row = counts.get(key(network, address));
    return { network, lane: lane as number | null, address, pending: row?.pending ?? 0, transactions: row?.total ?? 0 };
  }));
  for (const row of journal) {
    if (!laneOf.has(row.relayer.toLowerCase()) || !deps.networks.includes(row.network)) {
      rows.push({ network: row.network, lane: null, address: row.relayer, pending: row.pending, transactions: row.total });
    }
  }
  return rows;
}
