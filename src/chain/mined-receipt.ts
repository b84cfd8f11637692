import { parseEventLogs, type TransactionReceipt } from 'viem';
import type { MinedPosition } from './chain-journal.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';

/** Where a receipt says its transaction was mined (anvil's receipts carry their block's timestamp). */
export function positionOf(receipt: TransactionReceipt): MinedPosition {
  const { blockTimestamp } = receipt as { blockTimestamp?: bigint | string | null };
  return {
    blockNumber: Number(receipt.blockNumber),
    blockTimestamp: blockTimestamp === undefined || blockTimestamp === null ? undefined : Number(BigInt(blockTimestamp)),
    txIndex: receipt.transactionIndex ?? undefined,
    gasUsed: Number(receipt.gasUsed),
    feeWei: receipt.effectiveGasPrice === undefined ? undefined : receipt.gasUsed * receipt.effectiveGasPrice,
  };
}

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
