import type { AuthorizationRecord, AuthorizationRepository } from '../store/authorization-repository.ts';

type Lookups = Pick<AuthorizationRepository, 'findByReference' | 'findLatestByReferencePrefix' | 'voidReference'>;

/**
 * The authorization of an operation's transfer (its reference), read by a lookup that decides the
 * operation on it (the stale sweeps): none signed, a `void` row takes the reference first, so none
 * can be signed under it after (a run still alive, slower than the staleness window, that reserves
 * it then is refused `duplicate`) and the lookup's answer, `void`, stays true. Undefined when this
 * lookup voided it.
 */
export async function operationTransfer(authorizations: Lookups, network: string, reference: string, now: number): Promise<AuthorizationRecord | undefined> {
  const found = await authorizations.findByReference(network, reference);
  if (found || await authorizations.voidReference(network, reference, now)) return found;
  // Reserved between the read and the void: the run's own.
  return authorizations.findByReference(network, reference);
}

/** An attempt of an operation that signs one transfer per attempt (`<prefix><attempt>`, a reward claim). */
export interface TransferAttempt {
  prefix: string;
  /** The reference its transfer is signed under. */
  reference: string;
}

/**
 * `operationTransfer` of an attempt. An operation whose attempts an earlier version named by a
 * random id (a hyphen in it) and whose newest such transfer may still execute or executed is that
 * attempt's: an ended one (cancelled, expired, void) is an earlier attempt's, or this one's, and then
 * voiding this attempt's reference changes nothing.
 */
export async function attemptTransfer(authorizations: Lookups, network: string, attempt: TransferAttempt, now: number): Promise<AuthorizationRecord | undefined> {
  const latest = await authorizations.findLatestByReferencePrefix(network, attempt.prefix);
  if (latest?.reference.includes('-', attempt.prefix.length) && ['reserved', 'submitted', 'used'].includes(latest.status)) return latest;
  return operationTransfer(authorizations, network, attempt.reference, now);
}
