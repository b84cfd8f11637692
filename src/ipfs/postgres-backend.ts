import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Db } from '../store/db.ts';
import { createUnixfsBackend } from './embedded-backend.ts';
import { loadOrCreatePeerId } from './embedded-identity.ts';
import type { IpfsBackend } from './ipfs-backend.ts';
import { PostgresBlockstore, type PostgresBlockstoreOptions } from './postgres-blockstore.ts';

export interface PostgresBackendOptions extends PostgresBlockstoreOptions {
  /** The fleet's store (PostgreSQL); the blocks and pins are its tables `ipfs_blocks` and `ipfs_pins`. */
  db: Db;
  /** DATA_DIR: this instance's own peer key, `<dataDir>/ipfs/identity.pem`. */
  dataDir: string;
  version?: string;
}

export const postgresBackendVersion = 'vixpay-fleet-ipfs/1 (ipfs-unixfs-importer 17, blocks in PostgreSQL)';

/**
 * IPFS_BLOCKSTORE=postgres: the embedded backend's importer and exporter (createUnixfsBackend) over
 * the fleet's PostgreSQL, so that content added through any instance is read whole through every
 * other one, with the CIDs Kubo gives it, and no IPFS node to run. Each instance keeps its own peer
 * id (it is not a libp2p node; the id only names the instance). The pin is recorded after the add
 * wrote its last block: a root that is pinned, or whose block is stored, is complete.
 *
 * @example
 * const ipfs = await createPostgresBackend({ db: store.db, dataDir: config.dataDir });
 */
export async function createPostgresBackend(options: PostgresBackendOptions): Promise<IpfsBackend> {
  const root = path.join(options.dataDir, 'ipfs');
  await mkdir(root, { recursive: true, mode: 0o700 });
  const peerId = await loadOrCreatePeerId(path.join(root, 'identity.pem'));
  const clock = options.clock ?? Date.now;
  const blockstore = new PostgresBlockstore(options.db, options);
  return createUnixfsBackend({
    blocks: blockstore,
    writer: blockstore,
    pin: (cid) => options.db.insertInto('ipfs_pins').values({ cid, pinned_at: clock() })
      .onConflict((conflict) => conflict.column('cid').doNothing()).execute(),
    peerId,
    version: options.version ?? postgresBackendVersion,
    // The store is the platform's, closed by whoever opened it.
    close: async () => undefined,
  });
}
