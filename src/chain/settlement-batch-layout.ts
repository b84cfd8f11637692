import { bytesToHex, getAddress, hexToBytes, numberToHex, parseSignature, signatureToCompactSignature, size, type Address, type Hex } from 'viem';

/**
 * The packed batch `VixpSettlement.settle(bytes batch)` takes (contracts/VixpSettlement.sol has the
 * layout and why): groups of one token, each with its payee table and items; an item is its kind
 * (0: EIP-3009 with an EIP-2098 signature), payer, payee index, value as mantissa × 10^exponent,
 * validAfter, validBefore and nonce as length-prefixed integers, then `r` and `vs`.
 */

/** One EIP-3009 authorization in a batch: the signed fields and the 64-byte compact signature. */
export interface BatchItem {
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** EIP-2098: `r`, and `s` with the recovery bit on top. */
  r: Hex;
  vs: Hex;
}

/** Item kinds; a later release adds its own (another way of paying) with fields of its own. */
export const itemKind = { eip3009: 0 } as const;

const maxUint256 = (1n << 256n) - 1n;
/** Payees a group's table holds (one byte indexes it), items a group holds (two bytes count them). */
const maxPayees = 255;
const maxGroupItems = 0xffff;

/** `x` (0 to 2^256 − 1) as its length byte and its big-endian bytes without leading zeros. */
export function uint(x: bigint): Hex {
  if (x < 0n || x > maxUint256) throw new Error(`${x} is no uint256`);
  if (x === 0n) return '0x00';
  const hex = x.toString(16);
  const bytes = (hex.length + 1) >> 1;
  return `0x${bytes.toString(16).padStart(2, '0')}${hex.padStart(bytes * 2, '0')}`;
}

/** `value` as mantissa × 10^exponent with the largest exponent: 12.5 × 10^18 is 125 × 10^17. */
export function decimalParts(value: bigint): { mantissa: bigint; exponent: number } {
  let mantissa = value;
  let exponent = 0;
  while (mantissa !== 0n && mantissa % 10n === 0n && exponent < 77) {
    mantissa /= 10n;
    exponent += 1;
  }
  return { mantissa, exponent };
}

/** An item of the batch from a holder's 65-byte signature (`r || s || v`, low `s`, as viem signs). */
export function batchItem(item: Omit<BatchItem, 'r' | 'vs'> & { signature: Hex }): BatchItem {
  const { signature, ...fields } = item;
  const { r, yParityAndS } = signatureToCompactSignature(parseSignature(signature));
  return { ...fields, r, vs: yParityAndS };
}

/**
 * `items` grouped by token in the order tokens first appear (items keep their order within a token),
 * each group with its payee table (lower-case addresses): what a packed batch sends. Throws past 255 groups.
 */
export function groupByToken<T extends { token: Address; to: Address }>(items: readonly T[]): { token: Address; payees: string[]; items: T[] }[] {
  const groups: { token: Address; payees: string[]; items: T[] }[] = [];
  for (const item of items) {
    const token = item.token.toLowerCase();
    let group = groups.find((g) => g.token.toLowerCase() === token && g.items.length < maxGroupItems
      && (g.payees.includes(item.to.toLowerCase()) || g.payees.length < maxPayees));
    if (!group) {
      group = { token: item.token, payees: [], items: [] };
      groups.push(group);
    }
    if (!group.payees.includes(item.to.toLowerCase())) group.payees.push(item.to.toLowerCase());
    group.items.push(item);
  }
  if (groups.length > 255) throw new Error(`a batch holds at most 255 groups, not ${groups.length}`);
  return groups;
}

/** The packed batch of `items`, grouped by token in the order tokens first appear (items keep their order within a token). */
export function encodeBatch(items: readonly BatchItem[]): Hex {
  const groups = groupByToken(items);
  const parts: Hex[] = [numberToHex(groups.length, { size: 1 })];
  for (const group of groups) {
    parts.push(group.token, numberToHex(group.payees.length, { size: 1 }), ...group.payees as Hex[], numberToHex(group.items.length, { size: 2 }));
    for (const item of group.items) {
      const { mantissa, exponent } = decimalParts(item.value);
      if (size(item.r) !== 32 || size(item.vs) !== 32) throw new Error('an item\'s signature is r and vs, 32 bytes each');
      parts.push(
        numberToHex(itemKind.eip3009, { size: 1 }), item.from, numberToHex(group.payees.indexOf(item.to.toLowerCase()), { size: 1 }),
        numberToHex(exponent, { size: 1 }), uint(mantissa), uint(item.validAfter), uint(item.validBefore), uint(BigInt(item.nonce)), item.r, item.vs,
      );
    }
  }
  return `0x${parts.map((part) => part.slice(2)).join('')}`;
}

/**
 * Reads a packed batch field by field, as the settlement contracts do: `take(n)` bytes, one `byte()`,
 * an `integer()` (a length byte, then that many big-endian bytes, at most 32); `at()` is the offset
 * read so far. Reading past the end, or an integer longer than 32 bytes, throws naming `what`.
 */
export function packedReader(batch: Hex, what: string) {
  const bytes = hexToBytes(batch);
  let p = 0;
  const take = (n: number): Uint8Array => {
    if (p + n > bytes.length) throw new Error(`${what} ends at byte ${bytes.length}, inside a field at ${p}`);
    const field = bytes.subarray(p, p + n);
    p += n;
    return field;
  };
  const byte = () => take(1)[0]!;
  const integer = (): bigint => {
    const length = byte();
    if (length > 32) throw new Error(`${what}'s integer at byte ${p - 1} is ${length} bytes long`);
    return length === 0 ? 0n : BigInt(bytesToHex(take(length)));
  };
  return { take, byte, integer, at: () => p, length: bytes.length };
}

/**
 * The items of a packed batch, as the contract reads them; throws where it would revert
 * (`MalformedBatch`). For readers of settlement transactions and the tests.
 */
export function decodeBatch(batch: Hex): BatchItem[] {
  const { take, byte, integer, at, length } = packedReader(batch, 'a settlement batch');
  const items: BatchItem[] = [];
  const groups = byte();
  for (let g = 0; g < groups; g += 1) {
    const token = getAddress(bytesToHex(take(20)));
    const payees = Array.from({ length: byte() }, () => getAddress(bytesToHex(take(20))));
    const count = (byte() << 8) | byte();
    for (let i = 0; i < count; i += 1) {
      const kind = byte();
      if (kind !== itemKind.eip3009) throw new Error(`item kind ${kind} at byte ${at() - 1} is not one this release settles`);
      const from = getAddress(bytesToHex(take(20)));
      const to = payees[byte()];
      if (!to) throw new Error(`a payee index at byte ${at() - 1} is outside its table of ${payees.length}`);
      const exponent = byte();
      const value = integer() * 10n ** BigInt(exponent);
      const [validAfter, validBefore, nonce] = [integer(), integer(), integer()];
      items.push({ token, from, to, value, validAfter, validBefore, nonce: numberToHex(nonce, { size: 32 }), r: bytesToHex(take(32)), vs: bytesToHex(take(32)) });
    }
  }
  if (at() !== length) throw new Error(`a settlement batch of ${length} bytes ends at byte ${at()}`);
  return items;
}
