import {
  bytesToHex, encodeFunctionData, getAddress, numberToHex, parseSignature, signatureToCompactSignature,
  type Address, type Hex, type SignedAuthorization,
} from 'viem';
import { vixpAccountSettlementAbi } from '../gen/contracts/vixp-account-settlement.ts';
import { vixpayAccountAbi } from '../gen/contracts/vixpay-account.ts';
import type { AccountTransfer, SignedAccountTransfer } from './account-transfer.ts';
import { decimalParts, groupByToken, packedReader, uint } from './settlement-batch-layout.ts';
import { batchBaseGas, batchItemGas, directTransferGas, type SettlementCall } from './settlement-calldata.ts';

/**
 * The packed batch `VixpAccountSettlement.settle(bytes batch)` takes (contracts/VixpAccountSettlement.sol
 * has the layout): groups of one token with their payee table, as VixpSettlement's; an item is the
 * account, its payee index, the value as mantissa × 10^exponent, nonce and deadline as
 * length-prefixed integers, then the account key's EIP-2098 signature (`r`, `vs`). About 96 bytes a
 * transfer (a nonce under 256, a 4-byte deadline, a round value).
 */

/** An account transfer as a batch carries it: the signed fields and the compact signature. */
export interface AccountBatchItem extends AccountTransfer {
  r: Hex;
  vs: Hex;
}

/**
 * A settlement transaction of account transfers; `authorizationList` carries the delegations
 * (EIP-7702, signed once per account and network) of the accounts not delegated yet: a type-4
 * transaction when it is not empty.
 */
export interface AccountSettlementCall extends SettlementCall {
  authorizationList: readonly SignedAuthorization[];
}

/**
 * Gas of one delegation in a transaction: EIP-7702's PER_EMPTY_ACCOUNT_COST, charged as intrinsic gas
 * (a custodial account has no ether and has sent nothing: 12,500 of it is refunded only to an account
 * that exists). Execution gas of the batch is not changed by it.
 */
export const delegationGas = 25_000n;

const compact = (signature: Hex) => {
  const { r, yParityAndS } = signatureToCompactSignature(parseSignature(signature));
  return { r, vs: yParityAndS };
};

/** The packed batch of `items`, grouped by token in the order tokens first appear. */
export function encodeAccountBatch(items: readonly SignedAccountTransfer[]): Hex {
  const groups = groupByToken(items);
  const parts: Hex[] = [numberToHex(groups.length, { size: 1 })];
  for (const group of groups) {
    parts.push(group.token, numberToHex(group.payees.length, { size: 1 }), ...group.payees as Hex[], numberToHex(group.items.length, { size: 2 }));
    for (const item of group.items) {
      const { mantissa, exponent } = decimalParts(item.value);
      const { r, vs } = compact(item.signature);
      parts.push(
        item.account, numberToHex(group.payees.indexOf(item.to.toLowerCase()), { size: 1 }), numberToHex(exponent, { size: 1 }),
        uint(mantissa), uint(item.nonce), uint(item.deadline), r, vs,
      );
    }
  }
  return `0x${parts.map((part) => part.slice(2)).join('').toLowerCase()}`;
}

/** The items of a packed account batch, as the contract reads them; throws where it would revert (`MalformedBatch`). */
export function decodeAccountBatch(batch: Hex): AccountBatchItem[] {
  const { take, byte, integer, at, length } = packedReader(batch, 'an account batch');
  const items: AccountBatchItem[] = [];
  const groups = byte();
  for (let g = 0; g < groups; g += 1) {
    const token = getAddress(bytesToHex(take(20)));
    const payees = Array.from({ length: byte() }, () => getAddress(bytesToHex(take(20))));
    const count = (byte() << 8) | byte();
    for (let i = 0; i < count; i += 1) {
      const account = getAddress(bytesToHex(take(20)));
      const to = payees[byte()];
      if (!to) throw new Error(`a payee index at byte ${at() - 1} is outside its table of ${payees.length}`);
      const exponent = byte();
      const value = integer() * 10n ** BigInt(exponent);
      items.push({ token, account, to, value, nonce: integer(), deadline: integer(), r: bytesToHex(take(32)), vs: bytesToHex(take(32)) });
    }
  }
  if (at() !== length) throw new Error(`an account batch of ${length} bytes ends at byte ${at()}`);
  return items;
}

/**
 * The transaction settling `items` (at least one) with `delegations` carried along:
 * - one item: the account's own `signedTransfer`, sent to the account (no settlement call, no cold
 *   access to it); an item that cannot execute reverts the transaction instead of being skipped;
 * - more: `VixpAccountSettlement.settle(batch)` at `settlement`, gas as VixpSettlement's batches
 *   (the same allowance per item, checked the same way).
 * Each delegation adds `delegationGas` to the gas limit.
 */
export function encodeAccountSettlement(settlement: Address, items: readonly SignedAccountTransfer[], delegations: readonly SignedAuthorization[] = []): AccountSettlementCall {
  const [only, ...others] = items;
  if (!only) throw new Error('a settlement needs at least one item');
  const extra = delegationGas * BigInt(delegations.length);
  if (others.length === 0) {
    const { r, vs } = compact(only.signature);
    return {
      to: only.account,
      data: encodeFunctionData({ abi: vixpayAccountAbi, functionName: 'signedTransfer', args: [only.token, only.to, only.value, only.nonce, only.deadline, r, vs] }),
      gas: directTransferGas + extra,
      authorizationList: delegations,
    };
  }
  const data = encodeFunctionData({ abi: vixpAccountSettlementAbi, functionName: 'settle', args: [encodeAccountBatch(items)] });
  return { to: settlement, data, gas: batchBaseGas + batchItemGas * BigInt(items.length) + extra, authorizationList: delegations };
}
