import { getAddress, hexToBigInt, parseEventLogs, type Address, type Hex, type SignedAuthorization, type TransactionReceipt } from 'viem';
import { vixpAccountSettlementAbi } from '../gen/contracts/vixp-account-settlement.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { SignedAccountTransfer } from './account-transfer.ts';
import { delegationGas, encodeAccountSettlement } from './account-batch-layout.ts';
import { groupByToken } from './settlement-batch-layout.ts';
import { batchItemGas } from './settlement-calldata.ts';
import { itemKey } from './mined-receipt.ts';
import type { SettlementItem } from './relay-types.ts';
import type { BatchLayout } from './settlement-batcher.ts';

/**
 * Account transfers as the settlement batcher carries them (docs/decisions/tokens.md): the items of
 * custodial accounts delegated (EIP-7702) to contracts/VixpayAccount.sol, through
 * contracts/VixpAccountSettlement.sol (a batch of one to the account itself), in a type-4
 * transaction carrying the delegations of the accounts not delegated yet. Journaled, broadcast,
 * answered and recovered exactly as EIP-3009 batches are (settlement-batcher.ts): only the encoding
 * and the reading of the receipt differ.
 */

/** The code of an account delegated to `contract` (EIP-7702's delegation indicator). */
export const delegatedCode = (contract: Address): Hex => `0xef0100${contract.slice(2).toLowerCase()}`;

/** Whether `code` (an account's `eth_getCode`) is the delegation to `contract`. */
export const isDelegatedTo = (code: Hex | undefined, contract: Address): boolean => (code ?? '0x').toLowerCase() === delegatedCode(contract);

const transferOf = (item: SettlementItem): SignedAccountTransfer => {
  if (!item.account) throw new Error(`the authorization ${item.nonce} of ${item.from} is EIP-3009's, not an account transfer`);
  return { token: item.token, account: item.from, to: item.to, value: item.value, nonce: hexToBigInt(item.nonce), deadline: item.validBefore, signature: item.signature };
};

/** The delegations `items` carry, one per account (two transfers of one account carry the same one). */
export function delegationsOf(items: readonly SettlementItem[]): SignedAuthorization[] {
  const byAccount = new Map<string, SignedAuthorization>();
  for (const item of items) {
    const delegation = item.account?.delegation;
    if (delegation && !byAccount.has(item.from.toLowerCase())) byAccount.set(item.from.toLowerCase(), delegation);
  }
  return [...byAccount.values()];
}

/** The items in the order the packed batch carries them (grouped by token): `ItemSkipped`'s index counts them so. */
const inBatchOrder = (items: readonly SettlementItem[]): SettlementItem[] => groupByToken(items).flatMap((group) => group.items);

/**
 * The items of `items` (as encoded) a receipt executed: the transaction succeeded, the token's
 * `Transfer` of exactly that value from the account to the payee is in it, and (a batch) no
 * `ItemSkipped` of the batch contract names the item's index. A batch of one is the account's own
 * `signedTransfer`, which reverts when it cannot execute; the `Transfer` is still required, since a
 * call to an account that is not delegated succeeds doing nothing.
 */
export function executedAccountItems(receipt: TransactionReceipt, items: readonly SettlementItem[]): Set<string> {
  const executed = new Set<string>();
  if (receipt.status !== 'success' || items.length === 0) return executed;
  const transfers = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs });
  const moved = (item: SettlementItem) => transfers.some((log) => getAddress(log.address) === getAddress(item.token)
    && getAddress(log.args.from) === getAddress(item.from) && getAddress(log.args.to) === getAddress(item.to) && log.args.value === item.value);
  const ordered = items.length === 1 ? [...items] : inBatchOrder(items);
  const skipped = new Set(items.length === 1 ? [] : parseEventLogs({ abi: vixpAccountSettlementAbi, eventName: 'ItemSkipped', logs: receipt.logs })
    .filter((log) => receipt.to !== null && receipt.to !== undefined && getAddress(log.address) === getAddress(receipt.to))
    .map((log) => log.args.index));
  ordered.forEach((item, index) => {
    if (!skipped.has(BigInt(index)) && moved(item)) executed.add(itemKey(item.token, item.from, item.nonce));
  });
  return executed;
}

/** The batcher's layout of account transfers: each item's gas allowance and, at most, its account's delegation. */
export const accountBatchLayout: BatchLayout = {
  encode: (settlement, items) => encodeAccountSettlement(settlement, items.map(transferOf), delegationsOf(items)),
  executed: executedAccountItems,
  itemGas: batchItemGas + delegationGas,
};
