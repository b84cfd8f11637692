import { formatTokenAmount } from '../shared/amount.ts';
import type { Clock } from '../shared/clock.ts';
import type { ConsoleRepository, TokenAmountRow } from '../store/console-repository.ts';
import type { PaymentStatus } from '../store/schema.ts';

export interface ConsoleFiguresDeps {
  repository: ConsoleRepository;
  tokenDecimals(network: string, contractAddress: string): Promise<number>;
  /** A store's settlement account balance of the payment token (token units), read on chain. */
  storeBalance(address: string): Promise<{ balance: string; token: string; network: string }>;
  /** A relayer's native balance (gas), read on chain, in ether units. */
  nativeBalance(network: string, address: string): Promise<string>;
  journalBacklog(): Promise<Record<string, number>>;
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
  windowMinutes: number;
  payments: Record<PaymentStatus | 'total', number>;
  /** One entry per minute of the window, oldest first, zero-filled. */
  perMinute: Array<{ at: number; approved: number; failed: number; pending: number }>;
  byResCode: Array<{ resCode: string; resMessage: string; count: number }>;
  volume: TokenTotal[];
  refunds: { count: number; amounts: TokenTotal[] };
  rewards: { issued: number; claimed: number; canceled: number; open: number; claimedAmounts: TokenTotal[] };
  stores: Array<{ tid: string; name: string; settlementAddress: string; approved: number; balance: string; token: string; network: string }>;
  relayers: Array<{ network: string; address: string; pending: number; transactions: number; nativeBalance: string }>;
  journal: { backlog: Record<string, number>; total: number; oldestPendingAt: string | null; oldestPendingAgeSeconds: number | null };
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
  const [minutes, outcomes, approved, refunds, rewards, stores, lanes, oldest, backlog] = await Promise.all([
    repo.paymentsPerMinute(firstMinute), repo.paymentOutcomes(), repo.approvedAmounts(), repo.refundAmounts(), repo.rewards(),
    repo.stores(), repo.relayerLanes(), repo.oldestPendingOperation(), deps.journalBacklog(),
  ]);

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
    Promise.all(lanes.map(async (l) => ({
      network: l.network, address: l.relayer, pending: l.pending, transactions: l.total, nativeBalance: await deps.nativeBalance(l.network, l.relayer),
    }))),
  ]);
  const backlogTotal = Object.values(backlog).reduce((a, b) => a + b, 0);
  return {
    generatedAt: new Date(now).toISOString(),
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
    stores: storeRows,
    relayers: relayerRows,
    journal: {
      backlog, total: backlogTotal,
      oldestPendingAt: oldest === undefined ? null : new Date(oldest).toISOString(),
      oldestPendingAgeSeconds: oldest === undefined ? null : Math.max(0, Math.round((now - oldest) / 1000)),
    },
  };
}
