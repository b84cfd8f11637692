import { formatEther } from 'viem';
import type { MinedCostRow } from '../store/console-repository.ts';

/** The native currency each network pays its gas in (what a relayer lane's balance is counted in). */
export const nativeSymbols: Readonly<Record<string, string>> = { ethereum: 'ETH', optimism: 'ETH', bnb: 'BNB', opbnb: 'BNB' };

/** What settlement cost on one network today (the platform's day, TIME_ZONE): from the receipts of the transactions mined. */
export interface SettlementCosts {
  network: string;
  /** The native currency its gas is paid in: ETH (ethereum, optimism) or BNB (bnb, opbnb). */
  currency: string;
  /** Relayed transactions mined today, every kind (settlements, and the deploys, mints and cancellations apart below). */
  transactions: number;
  /** Their gas (receipts' gasUsed), summed. */
  gasUsed: string;
  /** Their fees (gasUsed × effectiveGasPrice) in `currency`, exact; in wei beside; rounded for a person. */
  feesPaid: string;
  feesPaidWei: string;
  feesPaidRounded: string;
  /** Settlement transactions (the batches that execute transfers) and their fees alone. */
  settlementTransactions: number;
  settlementFeesPaid: string;
  settlementFeesPaidWei: string;
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

/**
 * An amount of ether (or BNB) as a person reads it: thousands grouped, two decimals from 1 up, three
 * significant digits below (`999999.994518507748618634` → `999,999.99 ETH`, `0.000046221` → `0.0000462 ETH`).
 */
export function roundedForPerson(amount: string, symbol: string): string {
  const value = Number(amount);
  const digits = value === 0 || Math.abs(value) >= 1 ? { minimumFractionDigits: 2, maximumFractionDigits: 2 } : { maximumSignificantDigits: 3 };
  return `${new Intl.NumberFormat('en-US', digits).format(value)} ${symbol}`;
}

// The start of a day in a zone: src/shared/day-start.ts (a statement's day reads it without viem).
export { startOfDay } from '#shared/day-start.ts';

/** Per network (every one named, zeros when idle), the costs of the transactions mined since the day began. */
export function settlementCosts(networks: readonly string[], rows: readonly MinedCostRow[]): SettlementCosts[] {
  return networks.map((network) => {
    const currency = nativeSymbols[network] ?? 'ETH';
    let gas = 0n;
    let fees = 0n;
    let settlementFees = 0n;
    let transactions = 0;
    let settlementTransactions = 0;
    let settlementGas = 0n;
    let transfers = 0;
    let x402Transfers = 0;
    const settlementsByKind = { pos: 0, x402: 0, mixed: 0 };
    const otherTransactions: Record<string, number> = {};
    for (const row of rows) {
      if (row.network !== network) continue;
      transactions++;
      const used = BigInt(row.gasUsed ?? 0);
      const fee = BigInt(row.feeWei ?? 0);
      gas += used;
      fees += fee;
      if (row.kind !== 'settlement') {
        otherTransactions[row.kind] = (otherTransactions[row.kind] ?? 0) + 1;
        continue;
      }
      settlementTransactions++;
      settlementFees += fee;
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
    const feesPaid = formatEther(fees);
    return {
      network, currency, transactions, gasUsed: gas.toString(), feesPaid, feesPaidWei: fees.toString(), feesPaidRounded: roundedForPerson(feesPaid, currency),
      settlementTransactions, settlementFeesPaid: formatEther(settlementFees), settlementFeesPaidWei: settlementFees.toString(),
      settlementsByKind, otherTransactions, transfers, posTransfers: transfers - x402Transfers, x402Transfers,
      averageGasPerTransfer: transfers === 0 ? null : Math.round(Number(settlementGas) / transfers),
      transfersPerTransaction: carrying === 0 ? null : Number((transfers / carrying).toFixed(2)),
    };
  });
}
