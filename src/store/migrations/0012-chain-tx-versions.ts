import type { Kysely } from 'kysely';

// Re-priced relayer transactions (docs/decisions/settlement.md "Re-pricing"): a journaled transaction whose fee
// cap fell below the chain's base fee is signed again with the same nonce and higher fees. Its
// `chain_txs` row holds the version to broadcast (and, once mined, the one mined); every earlier
// version it superseded is kept here, because any of them may still be the one the chain mines.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('chain_tx_versions')
    .addColumn('tx_hash', 'text', (c) => c.primaryKey())
    .addColumn('chain_tx_id', 'text', (c) => c.notNull())
    .addColumn('raw_tx', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chain_tx_versions_tx').on('chain_tx_versions').column('chain_tx_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('chain_tx_versions').ifExists().execute();
}
