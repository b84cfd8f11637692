import { DomainError } from '#shared/errors.ts';
import { formatTokenAmount } from '#shared/amount.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { TransferStatusRecord, TransferStatusRepository } from '../store/transfer-status-repository.ts';

export interface TransferStatusDeps {
  transfers: TransferStatusRepository;
  /** What the node has now: true for a successful receipt at the network's `CONFIRMATIONS` depth. */
  receiptIsFinal(network: string, txHash: string): Promise<boolean>;
}

/**
 * What a client that got `202`, `10`, a `502` or no answer at all can learn of a transfer:
 * - `pending`: signed and sent (or about to be), not settled on chain yet; it executes at most once,
 *   and the expiry sweep settles it within `AUTHORIZATION_TTL_SECONDS` plus a sweep period;
 * - `confirmed`: executed on chain, in `transactionId`, and the node has that receipt now at the
 *   network's `CONFIRMATIONS` depth (a record says `used` while a node that lost the block, back
 *   from older state or reorged, has no receipt: that is `pending` until it is mined again);
 * - `failed`: it never executed and never can (reverted and cancelled, or expired): `failureCode` is
 *   the token API's `502` "not executed".
 */
export type TransferState = 'pending' | 'confirmed' | 'failed';

export interface TransferStatus {
  /** The transaction that executed it, or the one that was sent for it. */
  transactionId: string;
  status: TransferState;
  /** The wallet's record: reserved, submitted, used, canceled, expired or void. */
  authorization: TransferStatusRecord['status'];
  /** What the transfer was for: transfer (token API), pay (REST pay), payment, payment-cancel, reward, reward-cancel. */
  kind: string;
  network: string;
  contractAddress: string;
  tokenSymbol: string;
  fromAddress: string;
  toAddress: string;
  /** Decimal string in token units. */
  amount: string;
  failureCode?: string;
  failureMessage?: string;
}

const stateOf = (status: TransferStatusRecord['status']): TransferState =>
  status === 'used' ? 'confirmed' : status === 'reserved' || status === 'submitted' ? 'pending' : 'failed';

/** The status of a transfer record (see TransferStatus); read-only, it never acts on the chain. */
export function transferStatusOf(record: TransferStatusRecord): TransferStatus {
  const status = stateOf(record.status);
  const [kind] = record.reference.split(':');
  return {
    transactionId: record.txHash ?? '', status, authorization: record.status,
    // Stryker disable next-line StringLiteral: unreachable, split answers at least one part (the default is for the type only)
    kind: kind ?? '',
    network: record.network, contractAddress: record.contractAddress, tokenSymbol: record.tokenSymbol ?? '',
    fromAddress: record.fromAddress, toAddress: record.toAddress, amount: formatTokenAmount(BigInt(record.value), record.decimals ?? 18),
    ...(status === 'failed' && { failureCode: '502', failureMessage: 'the transfer was not executed on chain and can no longer be' }),
  };
}

/**
 * A transfer by its `TransactionID` on `network`: the token API's `getTransferStatus`. A settlement
 * transaction can carry several transfers: `fromAddress` picks the caller's (required when the
 * transaction carries transfers of several accounts). A relayed transaction without a transfer (a
 * createToken deployment) answers its own status, `kind` its kind. Unknown: `request.not_found`.
 */
export async function getTransferStatus(deps: TransferStatusDeps, network: NetworkName, transactionId: string, fromAddress?: string): Promise<TransferStatus | RelayedStatus> {
  const txHash = transactionId.toLowerCase();
  if (!/^0x[0-9a-f]{64}$/.test(txHash)) throw new DomainError('request.invalid', 'transactionId must be a 0x-prefixed 32-byte hex hash', { details: 'transactionId' });
  const records = await deps.transfers.findByTransaction(network, txHash, fromAddress);
  // Stryker disable next-line MethodExpression: equivalent, upper case groups the senders as lower case does
  const senders = new Set(records.map((r) => r.fromAddress.toLowerCase()));
  if (senders.size > 1) {
    throw new DomainError('request.invalid', `transaction ${txHash} carries transfers of ${senders.size} accounts: send fromAddress`, { details: 'fromAddress' });
  }
  const [record] = records;
  if (record) return onTheNode(deps, transferStatusOf(record));
  if (fromAddress !== undefined) throw new DomainError('request.not_found', `no transfer from ${fromAddress} in ${txHash} on ${network}`);
  const relayed = await deps.transfers.findRelayedTransaction(network, txHash);
  if (!relayed) throw new DomainError('request.not_found', `no transaction ${txHash} of the platform on ${network}`);
  const status: TransferState = relayed.status === 'confirmed' ? 'confirmed' : relayed.status === 'failed' ? 'failed' : 'pending';
  return onTheNode(deps, {
    transactionId: relayed.txHash, status, kind: relayed.kind, network: relayed.network,
    ...(status === 'failed' && { failureCode: '502', failureMessage: 'the transaction reverted on chain' }),
  });
}

/** `confirmed` only if the node has the receipt now, at the depth; otherwise `pending` (the relayer sends it again). */
async function onTheNode<T extends TransferStatus | RelayedStatus>(deps: TransferStatusDeps, status: T): Promise<T> {
  if (status.status !== 'confirmed' || await deps.receiptIsFinal(status.network, status.transactionId)) return status;
  return { ...status, status: 'pending' };
}

/** A relayed transaction that is not a transfer. */
export interface RelayedStatus {
  transactionId: string;
  status: TransferState;
  kind: string;
  network: string;
  failureCode?: string;
  failureMessage?: string;
}
