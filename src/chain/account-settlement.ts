import {
  decodeFunctionData, getAddress, hexToBigInt, numberToHex, parseEventLogs, parseTransaction,
  type Address, type Hex, type SignedAuthorization, type TransactionReceipt,
} from 'viem';
import { vixpAccountSettlementAbi } from '../gen/contracts/vixp-account-settlement.ts';
import { vixpayAccountAbi } from '../gen/contracts/vixpay-account.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { SignedAccountTransfer } from './account-transfer.ts';
import { decodeAccountBatch, delegationGas, encodeAccountSettlement } from './account-batch-layout.ts';
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

/** The calls an account settlement is (`encodeAccountSettlement`): the account's own transfer, or the batch contract's. */
const accountSettlementCalls = [...vixpayAccountAbi, ...vixpAccountSettlementAbi];

/** What reading a receipt needs of an item: whose transfer of what, to whom, under which account nonce. */
export type AccountItem = Pick<SettlementItem, 'token' | 'from' | 'to' | 'value' | 'nonce'>;

/** The items in the order the packed batch carries them (grouped by token): `ItemSkipped`'s index counts them so. */
const inBatchOrder = <T extends AccountItem>(items: readonly T[]): T[] => groupByToken(items).flatMap((group) => group.items);

/**
 * The items of `items` (as encoded) a receipt executed: the transaction succeeded, the token's
 * `Transfer` of exactly that value from the account to the payee is in it, and (a batch) no
 * `ItemSkipped` of the batch contract names the item's index. A batch of one is the account's own
 * `signedTransfer`, which reverts when it cannot execute; the `Transfer` is still required, since a
 * call to an account that is not delegated succeeds doing nothing.
 */
export function executedAccountItems(receipt: TransactionReceipt, items: readonly AccountItem[]): Set<string> {
  const executed = new Set<string>();
  if (receipt.status !== 'success' || items.length === 0) return executed;
  const transfers = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs });
  const moved = (item: AccountItem) => transfers.some((log) => getAddress(log.address) === getAddress(item.token)
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

/**
 * The account transfers a journaled settlement transaction carries, read from its signed bytes in
 * the order `encodeAccountSettlement` wrote them: the account's own `signedTransfer` (a batch of
 * one, sent to the account), else the packed batch of `settle(batch)`. What recovery reads a receipt
 * by when no caller is left holding the items (relayer-recovery.ts). Throws on any other transaction.
 */
export function accountItemsOf(rawTx: Hex): AccountItem[] {
  const { to, data } = parseTransaction(rawTx);
  if (!to || !data) throw new Error('not an account settlement: no recipient or no calldata');
  const nonceOf = (nonce: bigint) => numberToHex(nonce, { size: 32 });
  const call = decodeFunctionData({ abi: accountSettlementCalls, data });
  if (call.functionName === 'signedTransfer') {
    const [token, payee, value, nonce] = call.args;
    return [{ token: getAddress(token), from: getAddress(to), to: getAddress(payee), value, nonce: nonceOf(nonce) }];
  }
  if (call.functionName !== 'settle') throw new Error(`not an account settlement: ${call.functionName}`);
  return decodeAccountBatch(call.args[0]).map((item) => ({ token: item.token, from: item.account, to: item.to, value: item.value, nonce: nonceOf(item.nonce) }));
}

/** The batcher's layout of account transfers: each item's gas allowance and, at most, its account's delegation. */
export const accountBatchLayout: BatchLayout = {
  encode: (settlement, items) => encodeAccountSettlement(settlement, items.map(transferOf), delegationsOf(items)),
  executed: executedAccountItems,
  itemGas: batchItemGas + delegationGas,
};
