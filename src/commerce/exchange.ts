import { DomainError } from '#shared/errors.ts';

/** A positive decimal string such as "12500" or "1350.25": at most 30 integer and 18 fraction digits. */
const decimalPattern = /^(0|[1-9]\d{0,29})(\.\d{1,18})?$/;

interface ExactDecimal {
  digits: bigint;
  scale: number;
}

/** Parses a currency amount or rate exactly; refuses zero, negatives, exponents and junk. */
export function parseDecimal(value: string, field: string): ExactDecimal {
  if (typeof value !== 'string' || !decimalPattern.test(value)) {
    throw new DomainError('request.invalid', `${field} must be a positive decimal string such as "12500" or "1350.25"`, { details: field });
  }
  // The pattern took the value: a whole part always, a fraction perhaps.
  const [whole, fraction = ''] = value.split('.') as [string, string?];
  const digits = BigInt(whole + fraction);
  if (digits === 0n) throw new DomainError('request.invalid', `${field} must be greater than zero`, { details: field });
  return { digits, scale: fraction.length };
}

/** The canonical form of a decimal string ("012.50" is refused; "12.50" becomes "12.5"). */
export function normalizeDecimal(value: string, field: string): string {
  const { digits, scale } = parseDecimal(value, field);
  const text = digits.toString().padStart(scale + 1, '0');
  const whole = text.slice(0, text.length - scale);
  const fraction = text.slice(text.length - scale).replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole;
}

/**
 * token_amount = exchange_amount / exchange_rate in token base units, exactly, rounded down to the
 * token's smallest unit (18 decimals for VIXP): the payer never pays more than the quoted amount's
 * exact value, and the difference is below 10^-decimals of a token.
 */
export function tokenUnitsFor(exchangeAmount: string, exchangeRate: string, decimals: number): bigint {
  const amount = parseDecimal(exchangeAmount, 'exchange_amount');
  const rate = parseDecimal(exchangeRate, 'exchange_rate');
  // (a / 10^sa) / (r / 10^sr) * 10^d  =  a * 10^(d + sr) / (r * 10^sa)
  const units = (amount.digits * 10n ** BigInt(decimals + rate.scale)) / (rate.digits * 10n ** BigInt(amount.scale));
  if (units === 0n) throw new DomainError('request.invalid', 'exchange_amount is worth less than the smallest token unit', { details: 'exchange_amount' });
  return units;
}
