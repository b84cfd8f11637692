import { settlementCosts, type SettlementCosts } from '../console/settlement-costs.ts';
import type { MinedCostTx, StatementRepository } from '../store/statement-repository.ts';
import { statementDay } from './statement-day.ts';

/** The operator's day (docs/statements.md): per network, what settlement cost, from the receipts of the transactions mined. */
export interface OperatorDay {
  date: string;
  timeZone: string;
  from: string;
  to: string;
  networks: SettlementCosts[];
  /** Every relayed transaction mined that day (settlements, mints, cancellations), in chain order. */
  transactions: MinedCostTx[];
}

export async function operatorDay(
  deps: { repository: Pick<StatementRepository, 'minedBetween'>; timeZone: string; networks: readonly string[] }, date: string,
): Promise<OperatorDay> {
  const day = statementDay(date, deps.timeZone);
  const transactions = await deps.repository.minedBetween(deps.networks, Math.ceil(day.startMs / 1000), Math.ceil(day.endMs / 1000));
  return {
    date, timeZone: deps.timeZone, from: new Date(day.startMs).toISOString(), to: new Date(day.endMs).toISOString(),
    networks: settlementCosts(deps.networks, transactions), transactions,
  };
}

export const operatorDayColumns = ['network', 'tx_hash', 'kind', 'block_number', 'status', 'gas_used', 'fee_wei', 'transfers', 'gas_per_transfer'] as const;

/** CSV: one row per transaction, then one `total` row per network. */
export function operatorDayCsv(day: OperatorDay): string {
  const rows = day.transactions.map((t) => [
    t.network, t.txHash, t.kind, t.blockNumber, t.status, t.gasUsed ?? '', t.feeWei ?? '', t.transfers,
    t.transfers > 0 && t.gasUsed !== null ? Math.round(Number(t.gasUsed) / t.transfers) : '',
  ]);
  const feeWei = (network: string) => day.transactions.filter((t) => t.network === network).reduce((sum, t) => sum + BigInt(t.feeWei ?? 0), 0n);
  const totals = day.networks.map((n) => [
    n.network, 'total', `${n.settlementTransactions} of ${n.transactions} transactions settled transfers`, '', '', n.gasUsed, feeWei(n.network), n.transfers,
    n.averageGasPerTransfer ?? '',
  ]);
  return [operatorDayColumns.join(','), ...[...rows, ...totals].map((r) => r.join(','))].join('\r\n') + '\r\n';
}
