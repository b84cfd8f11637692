import type { Kysely } from 'kysely';

// The fleet's IPFS content on PostgreSQL (IPFS_BLOCKSTORE=postgres, docs/ipfs-api.md "A fleet's
// content"): every instance adds and reads the same blocks, so no Kubo node is needed for a fleet.
// - `ipfs_blocks`: one row per block, keyed by its multihash (as blockstore-fs names its files: a
//   CIDv0 and a CIDv1 of the same bytes are one block). Written once (INSERT … ON CONFLICT DO
//   NOTHING), never updated; a block is only written after every block it links to, so a row
//   present is a complete DAG below it.
// - `ipfs_pins`: the roots added with pin=true, written after the whole import succeeded.
// Made on SQLite too (one migration set for both dialects), where it stays empty: SQLite is one
// instance, whose blocks go to DATA_DIR/ipfs/blocks. `bytea` has no meaning to SQLite (NUMERIC
// affinity, which stores a blob as it is). Same column rules as 0001.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('ipfs_blocks')
    .addColumn('multihash', 'bytea', (c) => c.primaryKey())
    .addColumn('bytes', 'bytea', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('ipfs_pins')
    .addColumn('cid', 'text', (c) => c.primaryKey())
    .addColumn('pinned_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('ipfs_pins').ifExists().execute();
  await db.schema.dropTable('ipfs_blocks').ifExists().execute();
}
