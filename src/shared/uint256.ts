import { getAddress, isAddress, type Address } from 'viem';

/** The largest uint256: 2^256 − 1. */
export const maxUint256 = 2n ** 256n - 1n;

/** A number or address from outside, parsed exactly, or refused with the reason. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

/** 2^256 − 1 has 78 decimal digits: a longer canonical string is above it without being converted. */
const canonicalDecimal = /^(0|[1-9][0-9]{0,77})$/;

/**
 * A uint256 written as the x402 specification writes amounts (a decimal string of atomic units), in
 * its one canonical form: ASCII digits only, no sign, exponent, fraction, whitespace, hex prefix or
 * leading zero ("0" itself excepted), at most 2^256 − 1. Every other spelling ("01000", " 1000",
 * "1e3", "0x3e8", "+1000", "1000.0") and every non-string is refused, never read as a nearby value:
 * two parties comparing amounts must compare the same number, and a string that parses is its
 * exact value as a `bigint`.
 *
 * @example parseUint256('1000') // { ok: true, value: 1000n }
 * @example parseUint256('01000') // { ok: false, reason: 'not a canonical decimal …' }
 */
export function parseUint256(input: unknown): Parsed<bigint> {
  if (typeof input !== 'string') return { ok: false, reason: 'must be a string of decimal digits' };
  if (!canonicalDecimal.test(input)) {
    return { ok: false, reason: 'not a canonical decimal integer (digits only, no sign, exponent, fraction, whitespace or leading zeros)' };
  }
  const value = BigInt(input);
  if (value > maxUint256) return { ok: false, reason: 'above 2^256 − 1' };
  return { ok: true, value };
}

/** The canonical spelling of a uint256 (`parseUint256` reads it back exactly). */
export function formatUint256(value: bigint): string {
  if (value < 0n || value > maxUint256) throw new RangeError(`${value} is not a uint256`);
  return value.toString(10);
}

/**
 * An EVM address from outside: 0x and 40 hex digits, all lowercase or with its EIP-55 checksum
 * (a mixed-case spelling with a wrong checksum is refused: it is usually a typo), as viem's
 * `isAddress` checks it. Answers it checksummed.
 */
export function parseAddress(input: unknown): Parsed<Address> {
  if (typeof input !== 'string' || !isAddress(input, { strict: true })) {
    return { ok: false, reason: 'must be an address: 0x and 40 hex digits, lowercase or EIP-55 checksummed' };
  }
  return { ok: true, value: getAddress(input) };
}

/**
 * Unix seconds as a JavaScript number for the platform's own clocks (when to stop holding funds,
 * when to look again): exact up to 2^53 − 1, and that at or above it (some 285 million years from
 * now: later than any clock reaches). Never what is sent to a chain: that stays the exact `bigint`.
 */
export function clockSeconds(value: bigint): number {
  return value >= BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}

/** A chain count that fits a JavaScript number (a block number) as one: exact, or a RangeError above 2^53 − 1, never rounded. */
export function exactNumber(value: bigint): number {
  if (value < BigInt(Number.MIN_SAFE_INTEGER) || value > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${value} is beyond 2^53 − 1`);
  return Number(value);
}
