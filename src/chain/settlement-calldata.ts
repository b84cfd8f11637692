import { encodeFunctionData, parseSignature, signatureToCompactSignature, size, toHex, type Address, type Hex } from 'viem';
import { vixpSettlementAbi } from '../gen/contracts/vixp-settlement.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { SettlementItem } from './relay-types.ts';

/** A settlement transaction: where it goes, its calldata and the gas limit it is sent with. */
export interface SettlementCall {
  to: Address;
  data: Hex;
  gas: bigint;
}

/**
 * Gas limit of a settlement batch: a base, and per item the contract's allowance
 * (ITEM_GAS 150,000 × 64/63 + 10,000 kept back) and the item's calldata.
 */
export const batchBaseGas = 60_000n;
export const batchItemGas = 175_000n;
/**
 * Gas limit of a batch of one, sent to the token directly: the intrinsic 21,000, its 292 calldata
 * bytes and the allowance an item gets in a batch (150,000). Only the gas used is paid.
 */
export const directTransferGas = 180_000n;
/**
 * Gas limit of a transfer sent alone with a contract account's signature: `directTransferGas`, its
 * signature's calldata (16 a byte) and 200,000 for the wallet's `isValidSignature` (a Safe of one to
 * a few owners uses 10,000 to 30,000). Only the gas used is paid.
 */
export const contractSignatureGas = (signature: Hex): bigint => directTransferGas + 200_000n + 16n * BigInt(size(signature));

/**
 * The transaction that settles `items` (in this order, at least one):
 * - one item: the token's own `transferWithAuthorization(from, to, value, validAfter, validBefore, nonce, v, r, s)`,
 *   sent to the token. It costs less than the same item in a batch (no settlement call, 292 calldata
 *   bytes instead of 420) and its receipt has the same `Transfer` and `AuthorizationUsed` logs; an item
 *   that cannot execute reverts the transaction instead of being skipped, which tells the same thing.
 * - more: `VixpSettlement.settle(groups)` at `settlement`, one group per token (in the order tokens
 *   first appear), each item 7 words, both validity bounds in one (`window`), with its EIP-2098 compact
 *   signature (contracts/VixpSettlement.sol documents the layout): 226 bytes per item in a batch of 100 of one token.
 * Every signature is the holder's 65-byte `r || s || v` with a low `s` (as viem signs), except an
 * item sent `alone` (a contract account's: the token's `bytes signature` form, `encodeDirectTransfer`).
 */
/** The largest bound a settlement item's `window` word holds as it is: 2^128 − 1, which stands for 2^256 − 1 in `validBefore`. */
const windowHalf = (1n << 128n) - 1n;
const maxUint256 = (1n << 256n) - 1n;

/**
 * Whether a batch can carry this validity window (contracts/VixpSettlement.sol): `validAfter`
 * below 2^128 − 1 (any timestamp; a later one is never due), `validBefore` below 2^128 − 1 or
 * exactly 2^256 − 1. The x402 facilitator refuses any other authorization before accepting it.
 */
export function carriesWindow(validAfter: bigint, validBefore: bigint): boolean {
  return validAfter >= 0n && validAfter < windowHalf && validBefore >= 0n && (validBefore < windowHalf || validBefore === maxUint256);
}

/** The item's `window` word: `validAfter << 128 | validBefore`, validBefore 2^256 − 1 as 2^128 − 1. */
export function settlementWindow(validAfter: bigint, validBefore: bigint): Hex {
  if (!carriesWindow(validAfter, validBefore)) throw new Error(`a settlement batch cannot carry validAfter ${validAfter}, validBefore ${validBefore}`);
  return toHex((validAfter << 128n) | (validBefore === maxUint256 ? windowHalf : validBefore), { size: 32 });
}

export function encodeSettlement(settlement: Address, items: readonly SettlementItem[]): SettlementCall {
  const [only, ...others] = items;
  if (!only) throw new Error('a settlement needs at least one item');
  return others.length === 0 ? encodeDirectTransfer(only) : encodeSettlementBatch(settlement, items);
}

/**
 * One item as the token's own `transferWithAuthorization`, sent to the token: the `(v, r, s)` form
 * (292 bytes), or for an item sent `alone` (a contract account's signature) the `bytes signature` form.
 */
export function encodeDirectTransfer(item: SettlementItem): SettlementCall {
  if (item.alone) {
    return {
      to: item.token,
      data: encodeFunctionData({
        abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
        args: [item.from, item.to, item.value, item.validAfter ?? 0n, item.validBefore, item.nonce, item.signature],
      }),
      gas: contractSignatureGas(item.signature),
    };
  }
  const { r, s, yParity } = parseSignature(item.signature);
  return {
    to: item.token,
    data: encodeFunctionData({
      abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
      args: [item.from, item.to, item.value, item.validAfter ?? 0n, item.validBefore, item.nonce, yParity + 27, r, s],
    }),
    gas: directTransferGas,
  };
}

/** Items as one `VixpSettlement.settle(groups)` call at `settlement`, whatever their number. */
export function encodeSettlementBatch(settlement: Address, items: readonly SettlementItem[]): SettlementCall {
  const groups = new Map<string, { token: Address; items: SettlementCallItem[] }>();
  for (const item of items) {
    if (item.alone) throw new Error(`the authorization ${item.nonce} of ${item.from} is a contract account's: it is sent alone, never in a batch`);
    const key = item.token.toLowerCase();
    const group = groups.get(key) ?? { token: item.token, items: [] };
    groups.set(key, group);
    const { r, yParityAndS } = signatureToCompactSignature(parseSignature(item.signature));
    group.items.push({ from: item.from, to: item.to, value: item.value, window: settlementWindow(item.validAfter ?? 0n, item.validBefore), nonce: item.nonce, r, vs: yParityAndS });
  }
  return {
    to: settlement,
    data: encodeFunctionData({ abi: vixpSettlementAbi, functionName: 'settle', args: [[...groups.values()]] }),
    gas: batchBaseGas + batchItemGas * BigInt(items.length),
  };
}

interface SettlementCallItem {
  from: Address;
  to: Address;
  value: bigint;
  window: Hex;
  nonce: Hex;
  r: Hex;
  vs: Hex;
}
