import { formatEther } from 'viem';
import type { MinedCostRow } from '../store/console-repository.ts';

/** The native currency each network pays its gas in (what a relayer lane's balance is counted in). */
export const nativeSymbols: Readonly<Record<string, string>> = { ethereum: 'ETH', optimism: 'ETH', bnb: 'BNB', opbnb: 'BNB' };

/** What settlement cost on one network today (the platform's day, TIME_ZONE): from the receipts of the transactions mined. */
export interface SettlementCosts {
  network: string;
  /** Relayed transactions mined today (every kind: settlements, mints, cancellations). */
  transactions: number;
  /** Their gas (receipts' gasUsed), summed. */
  gasUsed: string;
  /** Their fees (gasUsed × effectiveGasPrice) in ether, exact, and rounded for a person. */
  feesPaid: string;
  feesPaidRounded: string;
  /** Transactions that executed transfers (authorizations used), and those transfers. */
  settlementTransactions: number;
  transfers: number;
  /** Gas of those transactions per transfer they executed; null without any. */
  averageGasPerTransfer: number | null;
  transfersPerTransaction: number | null;
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

/** Epoch ms of the start of the day `epochMs` falls in, in `timeZone` (IANA). */
export function startOfDay(epochMs: number, timeZone: string): number {
  const formatter = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
  const wall = (at: number) => {
    const p = Object.fromEntries(formatter.formatToParts(new Date(at)).map((part) => [part.type, Number(part.value)]));
    return { utc: Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!), midnight: Date.UTC(p.year!, p.month! - 1, p.day!) };
  };
  const now = wall(epochMs);
  const offset = now.utc - Math.floor(epochMs / 1000) * 1000;
  const guess = now.midnight - offset;
  // The offset at midnight itself (a daylight-saving change during the day moves it).
  return now.midnight - (wall(guess).utc - guess);
}

/** Per network (every one named, zeros when idle), the costs of the transactions mined since the day began. */
export function settlementCosts(networks: readonly string[], rows: readonly MinedCostRow[]): SettlementCosts[] {
  return networks.map((network) => {
    let gas = 0n;
    let fees = 0n;
    let transactions = 0;
    let settlementTransactions = 0;
    let settlementGas = 0n;
    let transfers = 0;
    for (const row of rows) {
      if (row.network !== network) continue;
      transactions++;
      const used = BigInt(row.gasUsed ?? 0);
      gas += used;
      fees += BigInt(row.feeWei ?? 0);
      if (row.transfers > 0) {
        settlementTransactions++;
        settlementGas += used;
        transfers += row.transfers;
      }
    }
    const feesPaid = formatEther(fees);
    return {
      network, transactions, gasUsed: gas.toString(), feesPaid, feesPaidRounded: roundedForPerson(feesPaid, nativeSymbols[network] ?? 'ETH'),
      settlementTransactions, transfers,
      averageGasPerTransfer: transfers === 0 ? null : Math.round(Number(settlementGas) / transfers),
      transfersPerTransaction: settlementTransactions === 0 ? null : Number((transfers / settlementTransactions).toFixed(2)),
    };
  });
}
