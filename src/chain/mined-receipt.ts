import { getAddress, hexToBigInt, parseEventLogs, type TransactionReceipt } from 'viem';
import type { MinedPosition } from './chain-journal.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';

/** What the relayer reads beside a receipt (src/chain/mined-facts.ts): its block header's time, and an OP-stack operator fee. */
export interface MinedFacts {
  /** The block's timestamp (seconds) from its header; undefined when the node did not answer for the block. */
  blockTimestamp: number | undefined;
  /** The operator fee in wei (OP stack since Isthmus); undefined where the chain has none. */
  operatorFeeWei?: bigint | undefined;
}

/**
 * Where a receipt's transaction was mined and what it cost: execution (gasUsed × effectiveGasPrice),
 * and on an OP-stack chain the L1 data fee the receipt states (`l1Fee`) and the operator fee. The
 * block's time comes from its header (`facts`): the JSON-RPC receipt has no timestamp (anvil adds
 * `blockTimestamp`, Hardhat's node does not).
 */
export function positionOf(receipt: TransactionReceipt, facts: MinedFacts): MinedPosition {
  return {
    blockNumber: Number(receipt.blockNumber),
    blockTimestamp: facts.blockTimestamp,
    txIndex: receipt.transactionIndex ?? undefined,
    gasUsed: Number(receipt.gasUsed),
    feeWei: receipt.effectiveGasPrice === undefined ? undefined : receipt.gasUsed * receipt.effectiveGasPrice,
    l1FeeWei: l1FeeOf(receipt),
    operatorFeeWei: facts.operatorFeeWei,
  };
}

/** A receipt field that is a JSON-RPC quantity (viem's default formatter leaves the OP-stack ones as hex), exactly; undefined when absent or not one. */
function quantityField(receipt: TransactionReceipt, field: string): bigint | undefined {
  const value = (receipt as unknown as Record<string, unknown>)[field];
  if (typeof value === 'bigint') return value >= 0n ? value : undefined;
  return typeof value === 'string' && /^0x[0-9a-fA-F]{1,64}$/.test(value) ? BigInt(value) : undefined;
}

/** The L1 data fee (wei) an OP-stack receipt states (`l1Fee`); undefined on a chain without one. */
export const l1FeeOf = (receipt: TransactionReceipt): bigint | undefined => quantityField(receipt, 'l1Fee');

/** Whether an OP-stack receipt's operator fee parameters are set (`operatorFeeScalar`, `operatorFeeConstant`): then it paid an operator fee. */
export const paysOperatorFee = (receipt: TransactionReceipt): boolean =>
  (quantityField(receipt, 'operatorFeeScalar') ?? 0n) > 0n || (quantityField(receipt, 'operatorFeeConstant') ?? 0n) > 0n;

/** One settlement item's key: its token, authorizer and authorization nonce. */
export const itemKey = (token: string, authorizer: string, nonce: string) => `${token.toLowerCase()}:${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;

/**
 * The row key (`authorizations.nonce`) of an authorization signed by an outside payer (an x402
 * payment) or by a custodial account with its counter nonce (src/wallet/authorization-nonce.ts):
 * EIP-3009 nonces belong to the authorizer and the token, so one is unique only per network, token
 * and authorizer; the platform's earlier nonces (derived from network and reference) are their own
 * key. Lowercase.
 */
export const authorizationKey = (network: string, token: string, authorizer: string, nonce: string) =>
  `${network}:${itemKey(token, authorizer, nonce)}`;

/** The `AuthorizationUsed(authorizer, nonce)` logs of a successful receipt: the authorizations it executed. */
function usedAuthorizations(receipt: TransactionReceipt) {
  if (receipt.status !== 'success') return [];
  return parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipt.logs });
}

/** The authorization nonces a receipt shows used. */
export function usedNonces(receipt: TransactionReceipt): string[] {
  return usedAuthorizations(receipt).map((log) => log.args.nonce);
}

/** The `authorizations` rows a receipt of `network` shows used: by their nonce (the platform's own) and by `authorizationKey` (an outside payer's). */
export function usedAuthorizationKeys(network: string, receipt: TransactionReceipt): string[] {
  return usedAuthorizations(receipt).flatMap((log) => [log.args.nonce, authorizationKey(network, log.address, log.args.authorizer, log.args.nonce)]);
}

/** The items a settlement receipt executed (`itemKey`): each has its token's `AuthorizationUsed(authorizer, nonce)`. */
export function executedItems(receipt: TransactionReceipt): Set<string> {
  return new Set(usedAuthorizations(receipt).map((log) => itemKey(log.address, log.args.authorizer, log.args.nonce)));
}

/**
 * How many transfers a mined receipt executed, read from the receipt alone (the metric and the
 * fee per transfer, src/compose/observability.ts): each `AuthorizationUsed` (an EIP-3009 item), and
 * each token `Transfer` out of an account that no `AuthorizationUsed` of the same token names (an
 * account item: contracts/VixpAccountSettlement.sol emits none for an item it skipped, `ItemSkipped` instead, and
 * the account's own batch of one emits it only when it moved). Mints (`Transfer` from the zero
 * address) are not transfers; a failed transaction executed none.
 */
export function executedTransferCount(receipt: TransactionReceipt): number {
  if (receipt.status !== 'success') return 0;
  const used = parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipt.logs });
  const authorized = new Set(used.map((log) => `${getAddress(log.address)}:${getAddress(log.args.authorizer)}`));
  const accountTransfers = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })
    .filter((log) => hexToBigInt(log.args.from) !== 0n && !authorized.has(`${getAddress(log.address)}:${getAddress(log.args.from)}`));
  return used.length + accountTransfers.length;
}
