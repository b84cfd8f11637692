import { formatUnits } from 'viem';
import { DomainError } from './errors.ts';
import { maxUint256 } from './uint256.ts';

/** 2^256 − 1 has 78 digits: a longer whole part is above any amount a chain carries, whatever the decimals. */
const decimalPattern = /^(0|[1-9]\d{0,77})(\.\d+)?$/;

/**
 * Parses a decimal token amount string ("12.5") into base units, exactly. Refuses anything that
 * is not a plain positive decimal, that has more fractional digits than the token has, or that is
 * more than 2^256 − 1 base units (a uint256, what an ERC-20 amount is).
 */
export function parseTokenAmount(amount: string, decimals: number, field = 'amount'): bigint {
  if (typeof amount !== 'string' || !decimalPattern.test(amount)) {
    throw new DomainError('request.invalid', `${field} must be a decimal string such as "12.5"`, { details: field });
  }
  // The pattern took the amount: a whole part always, a fraction perhaps.
  const [whole, fraction = ''] = amount.split('.') as [string, string?];
  if (fraction.length > decimals) {
    throw new DomainError('request.invalid', `${field} has more than ${decimals} decimal places`, { details: field });
  }
  // BigInt('') is 0n: no fraction digits with a token of no decimals.
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, '0'));
  if (units === 0n) throw new DomainError('request.invalid', `${field} must be greater than zero`, { details: field });
  if (units > maxUint256) throw new DomainError('request.invalid', `${field} is more than 2^256 − 1 base units`, { details: field });
  return units;
}

/** Base units to the canonical decimal string (no trailing zeros). */
export function formatTokenAmount(units: bigint, decimals: number): string {
  return formatUnits(units, decimals);
}
