import { formatEther } from 'viem';

/**
 * A fee as an operator reads it: exact in the network's coin (`amount`, ETH or BNB), in wei beside,
 * and rounded for a person (`rounded`, `0.000893 ETH`).
 */
export interface FeeAmount {
  amount: string;
  wei: string;
  rounded: string;
}

/**
 * What transactions cost, by part: execution (each receipt's gasUsed × effectiveGasPrice), the L1
 * data fee an OP-stack network charges for posting the transaction to L1 (the receipt's `l1Fee`;
 * 0 elsewhere), the operator fee (OP stack since Isthmus; 0 elsewhere), and their sum, what left the
 * relayer's balance.
 */
export interface FeeParts {
  execution: FeeAmount;
  l1Data: FeeAmount;
  operator: FeeAmount;
  total: FeeAmount;
}

/** The same parts in wei, as added up. */
export interface WeiParts {
  execution: bigint;
  l1Data: bigint;
  operator: bigint;
}

export const noWei = (): WeiParts => ({ execution: 0n, l1Data: 0n, operator: 0n });

/** A recorded transaction's parts (NULL: none recorded, e.g. a network without an L1 data fee). */
export function weiPartsOf(row: { feeWei: string | null; l1FeeWei?: string | null; operatorFeeWei?: string | null }): WeiParts {
  return { execution: BigInt(row.feeWei ?? 0), l1Data: BigInt(row.l1FeeWei ?? 0), operator: BigInt(row.operatorFeeWei ?? 0) };
}

export function addWei(into: WeiParts, parts: WeiParts): void {
  into.execution += parts.execution;
  into.l1Data += parts.l1Data;
  into.operator += parts.operator;
}

export const totalWei = (parts: WeiParts): bigint => parts.execution + parts.l1Data + parts.operator;

/** `wei` divided by `count`, to the nearest wei (half up). */
const divided = (wei: bigint, count: number) => (wei * 2n + BigInt(count)) / (2n * BigInt(count));

/**
 * Fees per transfer or per transaction: each part and the whole divided by `count`, each to the
 * nearest wei on its own (so the rounded parts may add up to the rounded whole ± 1 wei).
 */
export function feePartsPer(parts: WeiParts, count: number, currency: string): FeeParts {
  return {
    execution: feeAmount(divided(parts.execution, count), currency), l1Data: feeAmount(divided(parts.l1Data, count), currency),
    operator: feeAmount(divided(parts.operator, count), currency), total: feeAmount(divided(totalWei(parts), count), currency),
  };
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

export function feeAmount(wei: bigint, currency: string): FeeAmount {
  const amount = formatEther(wei);
  return { amount, wei: wei.toString(), rounded: roundedForPerson(amount, currency) };
}

export function feeParts(parts: WeiParts, currency: string): FeeParts {
  return {
    execution: feeAmount(parts.execution, currency), l1Data: feeAmount(parts.l1Data, currency),
    operator: feeAmount(parts.operator, currency), total: feeAmount(totalWei(parts), currency),
  };
}
