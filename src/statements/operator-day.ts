import { formatEther } from 'viem';
import { coinSymbol } from '#shared/networks.ts';
import { costKindOf, settlementCosts, type SettlementCosts } from '../console/settlement-costs.ts';
import { feeParts, feePartsPer, totalWei, weiPartsOf, type FeeAmount, type FeeParts } from '../console/fee-parts.ts';
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
  /**
   * What it cost in `currency` (ETH or BNB), exact: execution (gasUsed × effectiveGasPrice) plus, on
   * an OP-stack network, its L1 data fee and operator fee; `feeWei` is the same in wei. Null when
   * no receipt cost was recorded. (`l1FeeWei` and `operatorFeeWei` are the recorded parts, null elsewhere.)
   */
  fee: string | null;
  feeWei: string | null;
  currency: string;
  /** The same by part, each exact, in wei and rounded; null when no cost was recorded. */
  fees: FeeParts | null;
  /** A settlement transaction's fee per transfer it executed (to the wei); null for the rest. */
  feePerTransfer: FeeAmount | null;
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
    transactions: mined.map((t) => {
      const currency = coinSymbol(t.network);
      const parts = weiPartsOf(t);
      const fees = t.feeWei === null ? null : feeParts(parts, currency);
      const perTransfer = fees && t.kind === 'settlement' && t.transfers > 0 ? feePartsPer(parts, t.transfers, currency).total : null;
      return {
        ...t, kind: costKindOf(t), fee: fees && formatEther(totalWei(parts)), feeWei: fees && fees.total.wei, currency, fees, feePerTransfer: perTransfer,
      };
    }),
  };
}

/** The CSV's columns: `fee`/`fee_wei` are the whole fee, its parts after the first thirteen (added later: the first stay as they were). */
export const operatorDayColumns = [
  'network', 'tx_hash', 'kind', 'block_number', 'status', 'gas_used', 'fee', 'currency', 'fee_wei', 'transfers', 'pos_transfers', 'x402_transfers', 'gas_per_transfer',
  'execution_fee', 'execution_fee_wei', 'l1_data_fee', 'l1_data_fee_wei', 'operator_fee', 'operator_fee_wei', 'fee_per_transfer', 'fee_per_transfer_wei',
] as const;

const counted = (counts: Record<string, number>) => Object.entries(counts).filter(([, n]) => n > 0).map(([kind, n]) => `${n} ${kind}`).join(' + ');

const partCells = (fees: FeeParts | null) => fees
  ? [fees.execution.amount, fees.execution.wei, fees.l1Data.amount, fees.l1Data.wei, fees.operator.amount, fees.operator.wei]
  : ['', '', '', '', '', ''];

/**
 * CSV: one row per transaction, then per network a `settlements` row (the headline: what the
 * settlement transactions cost, per transfer beside), an `other` row per kind that is not a
 * settlement (deploy, mint, cancel-authorization, wallet-deploy) and a `total` row of every
 * transaction. Fees in ETH/BNB, wei beside; `fee` is the whole fee, its parts in the last columns.
 */
export function operatorDayCsv(day: OperatorDay): string {
  const rows = day.transactions.map((t) => [
    t.network, t.txHash, t.kind, t.blockNumber, t.status, t.gasUsed ?? '', t.fee ?? '', t.currency, t.feeWei ?? '', t.transfers,
    t.transfers - t.x402Transfers, t.x402Transfers, t.transfers > 0 && t.gasUsed !== null ? Math.round(Number(t.gasUsed) / t.transfers) : '',
    ...partCells(t.fees), t.feePerTransfer?.amount ?? '', t.feePerTransfer?.wei ?? '',
  ]);
  const summaries = day.networks.flatMap((n) => {
    const { pos, x402, mixed } = n.settlementsByKind;
    const byKind = counted({ pos, x402, mixed });
    const other = counted(n.otherTransactions);
    const kinds = `settlements: ${n.settlementTransactions}${byKind ? ` (${byKind})` : ''}; other: ${other || 'none'}`;
    const perTransfer = n.settlementFeePerTransfer?.total;
    return [
      [n.network, 'settlements', `settlements: ${n.settlementTransactions}${byKind ? ` (${byKind})` : ''}`, '', '', '', n.settlementFees.total.amount, n.currency,
        n.settlementFees.total.wei, n.transfers, n.posTransfers, n.x402Transfers, n.averageGasPerTransfer ?? '', ...partCells(n.settlementFees),
        perTransfer?.amount ?? '', perTransfer?.wei ?? ''],
      ...Object.entries(n.otherFeesByKind).map(([kind, fees]) => [
        n.network, 'other', `${kind}: ${n.otherTransactions[kind] ?? 0}`, '', '', '', fees.total.amount, n.currency, fees.total.wei, 0, 0, 0, '', ...partCells(fees), '', '',
      ]),
      [n.network, 'total', kinds, '', '', n.gasUsed, n.feesPaid, n.currency, n.feesPaidWei, n.transfers, n.posTransfers, n.x402Transfers, n.averageGasPerTransfer ?? '',
        ...partCells(n.fees), '', ''],
    ];
  });
  return [operatorDayColumns.join(','), ...[...rows, ...summaries].map((r) => r.map(csvField).join(','))].join('\r\n') + '\r\n';
}

/**
 * A network's day on one line, settlement fees first (`ethereum: settlement fees 0.000651 ETH (651… wei)
 * over 9 transactions, 9 transfers, 0.0000723 ETH per transfer, 0.0000723 ETH per settlement transaction;
 * not settlement: 3 deploy 0.00590 ETH, …; all fees …`). The L1 data and operator fees are named where
 * there are any, and then the execution and L1 data parts of the fee per transfer and per transaction.
 */
export function operatorDayLine(n: SettlementCosts): string {
  const { pos, x402, mixed } = n.settlementsByKind;
  const fee = (f: FeeParts) => {
    const parts = [f.l1Data.wei !== '0' && `L1 data ${f.l1Data.amount}`, f.operator.wei !== '0' && `operator ${f.operator.amount}`].filter(Boolean);
    return `${f.total.amount} ${n.currency} (${f.total.wei} wei${parts.length ? `; execution ${f.execution.amount} + ${parts.join(' + ')}` : ''})`;
  };
  // Per transfer and per settlement transaction, each with its execution and L1 data parts where there is an L1 data fee.
  const per = (f: FeeParts | null, what: string) => f
    ? `, ${f.total.amount} ${n.currency} per ${what}${n.settlementFees.l1Data.wei !== '0' ? ` (execution ${f.execution.amount} + L1 data ${f.l1Data.amount})` : ''}`
    : '';
  const perTransfer = per(n.settlementFeePerTransfer, 'transfer') + per(n.settlementFeePerTransaction, 'settlement transaction');
  const other = Object.entries(n.otherFeesByKind).map(([kind, f]) => `${n.otherTransactions[kind] ?? 0} ${kind} ${f.total.amount} ${n.currency}`).join(', ') || 'none';
  return `${n.network}: settlement fees ${fee(n.settlementFees)} over ${n.settlementTransactions} settlement transactions (${pos} POS, ${x402} x402, ${mixed} both), `
    + `${n.transfers} transfers${perTransfer}; not settlement: ${other}; all fees ${n.feesPaid} ${n.currency} (${n.feesPaidWei} wei)`;
}
