import type { Hex } from 'viem';
import { DomainError, isDomainError, leavesOutcomeOpen } from '#shared/errors.ts';
import type { TransferReturnType } from './transfer.ts';

/** A transfer executed on chain, in `transactionId`. */
export type SettledTransfer = Omit<TransferReturnType, 'status'>;

/**
 * How a transfer ended, as the domains that move tokens need to know it:
 * - `settled`: executed on chain, in `transactionId`;
 * - `refused`: nothing moved and nothing signed for it can ever move anything (refused before
 *   signing, or sent, reverted and its authorization cancelled on chain): the operation may be
 *   reported failed and tried again;
 * - `pending`: sent in `transactionId` but not settled on chain yet, or (no `transactionId`)
 *   interrupted by an unexpected failure; it executes at most once and the expiry sweep settles it:
 *   the operation must stay pending. `error` is what a caller that must answer now answers.
 */
export type TransferOutcome =
  | ({ status: 'settled' } & SettledTransfer)
  | { status: 'refused'; error: DomainError }
  | { status: 'pending'; transactionId?: Hex; error: DomainError };

/** The outcome of a transfer call: every domain error but those that leave it open (`leavesOutcomeOpen`) is a refusal. */
export async function outcomeOf(transfer: Promise<TransferReturnType>): Promise<TransferOutcome> {
  try {
    const { status, ...settled } = await transfer;
    if (status === 'settled') return { status, ...settled };
    return {
      status, transactionId: settled.transactionId,
      error: new DomainError('chain.outcome_pending', 'the transfer is sent but not settled on chain yet', { details: settled.transactionId }),
    };
  } catch (error) {
    if (!isDomainError(error)) return { status: 'pending', error: new DomainError('internal', 'the transfer was interrupted', { cause: error }) };
    return leavesOutcomeOpen(error) ? { status: 'pending', error } : { status: 'refused', error };
  }
}
