import { addWei, feeParts, feePartsPer, noWei, totalWei, weiPartsOf, type FeeParts, type WeiParts } from './fee-parts.ts';
import type { MinedCostRow } from '../store/console-repository.ts';
import { coinSymbol } from '#shared/networks.ts';


/** What settlement cost on one network today (the platform's day, TIME_ZONE): from the receipts of the transactions mined. */
export interface SettlementCosts {
  network: string;
  /** The native currency its gas is paid in: ETH (ethereum, optimism) or BNB (bnb, opbnb). */
  currency: string;
  /**
   * The headline: what the settlement transactions (the batches that execute transfers) cost, by
   * part (execution, L1 data fee on OP-stack networks, operator fee) and in all; per transfer they
   * executed and per settlement transaction (null without any).
   */
  settlementFees: FeeParts;
  settlementFeePerTransfer: FeeParts | null;
  settlementFeePerTransaction: FeeParts | null;
  /** The rest, not settlement: deploys, mints, cancellations (`otherTransactions` counts them by kind), their fees in all and by kind. */
  otherFees: FeeParts;
  otherFeesByKind: Record<string, FeeParts>;
  /** Every relayed transaction mined today, settlements and the rest: their fees by part and in all. */
  fees: FeeParts;
  /** Relayed transactions mined today, every kind (settlements, and the deploys, mints and cancellations apart below). */
  transactions: number;
  /** Their gas (receipts' gasUsed), summed. */
  gasUsed: string;
  /** Every transaction's fees (= `fees.total`: execution, L1 data and operator fees) in `currency`, exact; in wei beside; rounded for a person. */
  feesPaid: string;
  feesPaidWei: string;
  feesPaidRounded: string;
  /** Settlement transactions and their fees alone (= `settlementFees.total`). */
  settlementTransactions: number;
  settlementFeesPaid: string;
  settlementFeesPaidWei: string;
  settlementFeesPaidRounded: string;
  /** Settlement transactions by what they carried: POS transfers only, x402 payments only, both in one batch. */
  settlementsByKind: { pos: number; x402: number; mixed: number };
  /** The other transactions by kind (`deploy`, `mint`, `cancel-authorization`, `wallet-deploy`): not settlements. */
  otherTransactions: Record<string, number>;
  /** Transfers executed (authorizations used): POS payments, refunds and rewards, and x402 payments. */
  transfers: number;
  posTransfers: number;
  x402Transfers: number;
  /** Gas of the settlement transactions per transfer they executed; null without any. */
  averageGasPerTransfer: number | null;
  transfersPerTransaction: number | null;
}

/** A settlement transaction's kind by what it carried; any other transaction keeps the relayer's kind. */
export function costKindOf(row: Pick<MinedCostRow, 'kind' | 'transfers' | 'x402Transfers'>): string {
  if (row.kind !== 'settlement') return row.kind;
  if (row.transfers === 0) return 'settlement';
  if (row.x402Transfers === 0) return 'pos-settlement';
  return row.x402Transfers === row.transfers ? 'x402-settlement' : 'mixed-settlement';
}

// How fees are rounded for a person: src/console/fee-parts.ts.
export { roundedForPerson } from './fee-parts.ts';

// The start of a day in a zone: src/shared/day-start.ts (a statement's day reads it without viem).
export { startOfDay } from '#shared/day-start.ts';

/** Per network (every one named, zeros when idle), the costs of the transactions mined since the day began. */
export function settlementCosts(networks: readonly string[], rows: readonly MinedCostRow[]): SettlementCosts[] {
  return networks.map((network) => {
    const currency = coinSymbol(network);
    let gas = 0n;
    let transactions = 0;
    let settlementTransactions = 0;
    let settlementGas = 0n;
    let transfers = 0;
    let x402Transfers = 0;
    const settlementWei = noWei();
    const otherWei = noWei();
    const otherWeiByKind: Record<string, WeiParts> = {};
    const settlementsByKind = { pos: 0, x402: 0, mixed: 0 };
    const otherTransactions: Record<string, number> = {};
    for (const row of rows) {
      if (row.network !== network) continue;
      transactions++;
      const used = BigInt(row.gasUsed ?? 0);
      const parts = weiPartsOf(row);
      gas += used;
      if (row.kind !== 'settlement') {
        otherTransactions[row.kind] = (otherTransactions[row.kind] ?? 0) + 1;
        addWei(otherWei, parts);
        addWei(otherWeiByKind[row.kind] ??= noWei(), parts);
        continue;
      }
      settlementTransactions++;
      addWei(settlementWei, parts);
      const kind = costKindOf(row);
      if (kind === 'pos-settlement') settlementsByKind.pos++;
      else if (kind === 'x402-settlement') settlementsByKind.x402++;
      else if (kind === 'mixed-settlement') settlementsByKind.mixed++;
      if (row.transfers > 0) {
        settlementGas += used;
        transfers += row.transfers;
        x402Transfers += row.x402Transfers;
      }
    }
    const carrying = settlementsByKind.pos + settlementsByKind.x402 + settlementsByKind.mixed;
    const allWei = noWei();
    addWei(allWei, settlementWei);
    addWei(allWei, otherWei);
    const fees = feeParts(allWei, currency);
    const settlementFees = feeParts(settlementWei, currency);
    return {
      network, currency,
      settlementFees,
      // Every settlement transaction's fee (one that executed nothing too: it was paid) over the transfers executed.
      settlementFeePerTransfer: transfers === 0 ? null : feePartsPer(settlementWei, transfers, currency),
      settlementFeePerTransaction: settlementTransactions === 0 ? null : feePartsPer(settlementWei, settlementTransactions, currency),
      otherFees: feeParts(otherWei, currency),
      otherFeesByKind: Object.fromEntries(Object.entries(otherWeiByKind).map(([kind, parts]) => [kind, feeParts(parts, currency)])),
      fees,
      transactions, gasUsed: gas.toString(), feesPaid: fees.total.amount, feesPaidWei: fees.total.wei, feesPaidRounded: fees.total.rounded,
      settlementTransactions, settlementFeesPaid: settlementFees.total.amount, settlementFeesPaidWei: totalWei(settlementWei).toString(),
      settlementFeesPaidRounded: settlementFees.total.rounded,
      settlementsByKind, otherTransactions, transfers, posTransfers: transfers - x402Transfers, x402Transfers,
      averageGasPerTransfer: transfers === 0 ? null : Math.round(Number(settlementGas) / transfers),
      transfersPerTransaction: carrying === 0 ? null : Number((transfers / carrying).toFixed(2)),
    };
  });
}
