import { formatEther } from 'viem';
import { costKindOf, nativeSymbols, settlementCosts, type SettlementCosts } from '../console/settlement-costs.ts';
import type { MinedCostTx, StatementRepository } from '../store/statement-repository.ts';
import { statementDay, zonedIsoTime } from './statement-day.ts';
import { csvField } from './statement-render.ts';

/** A mined transaction of the operator's day, its fee in the network's native currency with wei beside. */
export interface OperatorDayTx extends MinedCostTx {
  /**
   * `pos-settlement`, `x402-settlement`, `mixed-settlement` (a batch carrying both), `settlement`
   * (one that executed no transfer), or the relayer's kind for the rest: `deploy`, `mint`, `cancel-authorization`.
   */
  kind: string;
  /** gasUsed × effectiveGasPrice in `currency` (ETH or BNB), exact; `feeWei` is the same in wei. */
  fee: string | null;
  currency: string;
}

/** The operator's day (docs/statements.md): per network, what settlement cost, from the receipts of the transactions mined. */
export interface OperatorDay {
  date: string;
  timeZone: string;
  from: string;
  to: string;
  /** The day's first and last instants in `timeZone`, with its offset. */
  firstInstant: string;
  lastInstant: string;
  networks: SettlementCosts[];
  /** Every relayed transaction mined that day (settlements, mints, deploys, cancellations), in chain order. */
  transactions: OperatorDayTx[];
}

export async function operatorDay(
  deps: { repository: Pick<StatementRepository, 'minedBetween'>; timeZone: string; networks: readonly string[] }, date: string,
): Promise<OperatorDay> {
  const day = statementDay(date, deps.timeZone);
  const mined = await deps.repository.minedBetween(deps.networks, Math.ceil(day.startMs / 1000), Math.ceil(day.endMs / 1000));
  return {
    date, timeZone: deps.timeZone, from: new Date(day.startMs).toISOString(), to: new Date(day.endMs).toISOString(),
    firstInstant: zonedIsoTime(day.startMs, deps.timeZone), lastInstant: zonedIsoTime(day.endMs - 1, deps.timeZone),
    networks: settlementCosts(deps.networks, mined),
    transactions: mined.map((t) => ({
      ...t, kind: costKindOf(t), fee: t.feeWei === null ? null : formatEther(BigInt(t.feeWei)), currency: nativeSymbols[t.network] ?? 'ETH',
    })),
  };
}

export const operatorDayColumns = [
  'network', 'tx_hash', 'kind', 'block_number', 'status', 'gas_used', 'fee', 'currency', 'fee_wei', 'transfers', 'pos_transfers', 'x402_transfers', 'gas_per_transfer',
] as const;

const counted = (counts: Record<string, number>) => Object.entries(counts).filter(([, n]) => n > 0).map(([kind, n]) => `${n} ${kind}`).join(' + ');

/** CSV: one row per transaction, then one `total` row per network (fees in ETH/BNB, wei beside). */
export function operatorDayCsv(day: OperatorDay): string {
  const rows = day.transactions.map((t) => [
    t.network, t.txHash, t.kind, t.blockNumber, t.status, t.gasUsed ?? '', t.fee ?? '', t.currency, t.feeWei ?? '', t.transfers,
    t.transfers - t.x402Transfers, t.x402Transfers, t.transfers > 0 && t.gasUsed !== null ? Math.round(Number(t.gasUsed) / t.transfers) : '',
  ]);
  const totals = day.networks.map((n) => {
    const { pos, x402, mixed } = n.settlementsByKind;
    const byKind = counted({ pos, x402, mixed });
    const other = counted(n.otherTransactions);
    const kinds = `settlements: ${n.settlementTransactions}${byKind ? ` (${byKind})` : ''}; other: ${other || 'none'}`;
    return [n.network, 'total', kinds, '', '', n.gasUsed, n.feesPaid, n.currency, n.feesPaidWei, n.transfers, n.posTransfers, n.x402Transfers, n.averageGasPerTransfer ?? ''];
  });
  return [operatorDayColumns.join(','), ...[...rows, ...totals].map((r) => r.map(csvField).join(','))].join('\r\n') + '\r\n';
}
