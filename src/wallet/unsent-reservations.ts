import type { AuthorizationRepository } from '../store/authorization-repository.ts';

/**
 * Reservations this process knows were never sent (the relayer could not journal them: the disk was
 * full) and could not undo yet, for the same reason: each is undone (deleted, its temp key usable
 * again) at the next chance — a retry of its transfer, a question about its outcome, the periodic
 * sweep — once the store can write again. Kept per repository (one per composed platform). After a
 * restart none is remembered: such a reservation then ends `expired` by the expiry sweep, its temp key
 * spent.
 */
const unsent = new WeakMap<AuthorizationRepository, Map<string, string | undefined>>();

const pendingOf = (authorizations: AuthorizationRepository) => {
  let pending = unsent.get(authorizations);
  if (!pending) unsent.set(authorizations, pending = new Map());
  return pending;
};

/** Undoes the never-sent reservation `nonce` (and frees its temp key), or remembers to; true once undone. */
export async function releaseUnsent(authorizations: AuthorizationRepository, nonce: string, tempKeyHash?: string): Promise<boolean> {
  const pending = pendingOf(authorizations);
  try {
    await authorizations.release(nonce, tempKeyHash);
    pending.delete(nonce);
    return true;
  } catch {
    pending.set(nonce, tempKeyHash);
    return false;
  }
}

/**
 * Undoes `nonce`'s reservation if it is one left to undo (every such one without a nonce); throws the
 * store's error while it still cannot write. Nothing to do: resolves at once.
 */
export async function retryUnsent(authorizations: AuthorizationRepository, nonce?: string): Promise<void> {
  const pending = unsent.get(authorizations);
  if (!pending) return;
  for (const [held, tempKeyHash] of [...pending]) {
    if (nonce !== undefined && held !== nonce) continue;
    await authorizations.release(held, tempKeyHash);
    pending.delete(held);
  }
}

/** `retryUnsent` for the reservation of an operation (its reference), if one is left to undo. */
export async function retryUnsentOf(authorizations: AuthorizationRepository, network: string, reference: string): Promise<void> {
  if (!unsent.get(authorizations)?.size) return;
  const record = await authorizations.findByReference(network, reference);
  if (record) await retryUnsent(authorizations, record.nonce);
}
