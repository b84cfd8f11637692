import type { Store } from '../store/db.ts';
import { tryLock, type HeldLock } from '../store/advisory-lock.ts';

/**
 * An instance's membership of its fleet, for as long as it runs: a PostgreSQL advisory lock on the
 * platform's schema, shared by instances whose IPFS content is reachable from every instance (Kubo,
 * IPFS_API_URL), exclusive for an instance with the embedded blockstore (its content lives on its
 * own disk, so it must be alone). A dead instance's lock goes with its connection, at once. SQLite is
 * one instance by construction.
 */
export async function joinFleet(store: Store, ipfs: 'kubo' | 'embedded'): Promise<HeldLock> {
  const held = await tryLock(store, 'instances', ipfs === 'embedded' ? 'exclusive' : 'shared');
  if (held) return held;
  throw new Error(ipfs === 'embedded'
    ? 'embedded IPFS (IPFS_API_URL unset) keeps content on this instance\'s own disk, and other instances already run on this database: '
      + 'content added on one would not be found on another. Give every instance the same IPFS_API_URL (a Kubo node), or run one instance only'
    : 'an instance with embedded IPFS (IPFS_API_URL unset) already runs on this database and must stay alone: '
      + 'give it the same IPFS_API_URL as this one and restart it first');
}
