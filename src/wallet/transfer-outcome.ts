import { DomainError, isDomainError, leavesOutcomeOpen } from '../shared/errors.ts';
import type { TransferReturnType } from './transfer.ts';

/**
 * How a transfer ended, as the domains that move tokens need to know it:
 * - `settled`: executed on chain, in `transactionId`;
 * - `refused`: nothing moved and nothing signed for it can ever move anything (refused before
 *   signing, or sent, reverted and its authorization cancelled on chain): the operation may be
 *   reported failed and tried again;
 * - `pending`: sent but not settled on chain yet, or interrupted by an unexpected failure; it executes
 *   at most once and the expiry sweep settles it: the operation must stay pending.
 */
export type TransferOutcome =
  | ({ status: 'settled' } & TransferReturnType)
  | { status: 'refused'; error: DomainError }
  | { status: 'pending'; error: DomainError };

/** The outcome of a transfer call: every domain error but those that leave it open (`leavesOutcomeOpen`) is a refusal. */
export async function outcomeOf(transfer: Promise<TransferReturnType>): Promise<TransferOutcome> {
  try {
    return { status: 'settled', ...(await transfer) };
  } catch (error) {
    if (!isDomainError(error)) return { status: 'pending', error: new DomainError('internal', 'the transfer was interrupted', { cause: error }) };
    return { status: leavesOutcomeOpen(error) ? 'pending' : 'refused', error };
  }
}

/** For a caller that answers the error of anything but a settled transfer (the token API, REST pay). */
export function settledOrThrow(outcome: TransferOutcome): TransferReturnType {
  if (outcome.status !== 'settled') throw outcome.error;
  const { transactionId, amountRaw, contractAddress } = outcome;
  return { transactionId, amountRaw, contractAddress };
}
