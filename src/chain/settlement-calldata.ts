import { encodeFunctionData, parseSignature, size, type Address, type Hex } from 'viem';
import { vixpSettlementAbi } from '../gen/contracts/vixp-settlement.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { SettlementItem } from './relay-types.ts';
import { batchItem, encodeBatch } from './settlement-batch-layout.ts';

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
 *   sent to the token. It costs less than the same item in a batch (no settlement call nor cold access
 *   to it) and its receipt has the same `Transfer` and `AuthorizationUsed` logs; an item
 *   that cannot execute reverts the transaction instead of being skipped, which tells the same thing.
 * - more: `VixpSettlement.settle(batch)` at `settlement`, packed (src/chain/settlement-batch-layout.ts,
 *   contracts/VixpSettlement.sol): per token its payees once, per item the payer, a payee index, the
 *   value as mantissa × 10^exponent, both validity bounds and the nonce as short integers and the
 *   EIP-2098 compact signature: about 105 bytes a transfer of a custodial payer (the platform's
 *   counter nonce), 135 of an x402 payer (a random nonce and a validAfter), at 100 items.
 * Every signature is the holder's 65-byte `r || s || v` with a low `s` (as viem signs), except an
 * item sent `alone` (a contract account's: the token's `bytes signature` form, `encodeDirectTransfer`).
 */
/** The largest bound the earlier layout's `window` word held: 2^128 − 1, which stood for 2^256 − 1 in `validBefore`. */
const windowHalf = (1n << 128n) - 1n;
const maxUint256 = (1n << 256n) - 1n;

/**
 * Whether the x402 facilitator accepts this validity window: `validAfter` below 2^128 − 1 (any
 * timestamp; a later one is never due), `validBefore` below 2^128 − 1 or exactly 2^256 − 1: what the
 * earlier layout's one `window` word carried. The packed batch carries any bound; x402 keeps this
 * rule (docs/decisions/x402.md), which no client's timestamps reach.
 */
export function carriesWindow(validAfter: bigint, validBefore: bigint): boolean {
  return validAfter >= 0n && validAfter < windowHalf && validBefore >= 0n && (validBefore < windowHalf || validBefore === maxUint256);
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

/** Items as one `VixpSettlement.settle(batch)` call at `settlement`, whatever their number. */
export function encodeSettlementBatch(settlement: Address, items: readonly SettlementItem[]): SettlementCall {
  const packed = items.map((item) => {
    if (item.alone) throw new Error(`the authorization ${item.nonce} of ${item.from} is a contract account's: it is sent alone, never in a batch`);
    return batchItem({ token: item.token, from: item.from, to: item.to, value: item.value, validAfter: item.validAfter ?? 0n, validBefore: item.validBefore, nonce: item.nonce, signature: item.signature });
  });
  return {
    to: settlement,
    data: encodeFunctionData({ abi: vixpSettlementAbi, functionName: 'settle', args: [encodeBatch(packed)] }),
    gas: batchBaseGas + batchItemGas * BigInt(items.length),
  };
}
