import { setTimeout as sleep } from 'node:timers/promises';
import type { Store } from '../store/db.ts';
import { tryLock, type HeldLock, type LockMode } from '../store/advisory-lock.ts';

export interface MembershipOptions {
  /** Told when the membership's database connection was lost (the lock went with it). */
  onLost?: (error: Error) => void;
  /** Told when the lock is held again after a loss. */
  onRejoined?: () => void;
  /** How often a lost membership tries to join again. */
  retryMs?: number;
}

/**
 * An instance's membership of its fleet, for as long as it runs: a PostgreSQL advisory lock on the
 * platform's schema, shared by instances whose IPFS content is reachable from every instance (Kubo,
 * IPFS_API_URL, or the blocks in this PostgreSQL, IPFS_BLOCKSTORE=postgres), exclusive for an
 * instance with the file blockstore (its content lives on its own disk, so it must be alone). A dead instance's lock goes with its connection, at once. A
 * connection lost under a running instance (PostgreSQL restarted, a failover) takes the lock with it:
 * the instance keeps running and takes the lock again once the database answers. SQLite is one
 * instance by construction.
 */
export async function joinFleet(store: Store, ipfs: 'shared' | 'embedded', options: MembershipOptions = {}): Promise<Pick<HeldLock, 'release'>> {
  const mode: LockMode = ipfs === 'embedded' ? 'exclusive' : 'shared';
  let held = await tryLock(store, 'instances', mode);
  if (!held) {
    throw new Error(ipfs === 'embedded'
      ? 'embedded IPFS (IPFS_API_URL unset) keeps content on this instance\'s own disk, and other instances already run on this database: '
        + 'content added on one would not be found on another. Give every instance IPFS_BLOCKSTORE=postgres (the blocks in this database), '
        + 'or the same IPFS_API_URL (a Kubo node), or run one instance only'
      : 'an instance with embedded IPFS in its DATA_DIR (IPFS_API_URL and IPFS_BLOCKSTORE unset) already runs on this database and must stay alone: '
        + 'give it IPFS_BLOCKSTORE=postgres or the same IPFS_API_URL as this one and restart it first');
  }
  const stopped = new AbortController();
  void (async () => {
    while (held && !stopped.signal.aborted) {
      const error = await Promise.race([held.lost, new Promise<undefined>((resolve) => stopped.signal.addEventListener('abort', () => resolve(undefined)))]);
      if (!error) return;
      options.onLost?.(error);
      held = undefined;
      while (!held) {
        await sleep(options.retryMs ?? 2000, undefined, { signal: stopped.signal }).catch(() => undefined);
        if (stopped.signal.aborted) return;
        held = await tryLock(store, 'instances', mode).catch(() => undefined);
      }
      options.onRejoined?.();
    }
  })();
  return {
    async release() {
      stopped.abort();
      await held?.release();
    },
  };
}
