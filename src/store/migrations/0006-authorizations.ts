import type { Kysely } from 'kysely';

// EIP-3009 authorizations the platform signs for custodial accounts (src/wallet/authorization.ts).
// One row per operation attempt: its nonce, the funds it holds on the account until it is used or
// made unusable, and how it ended. Same column rules as 0001.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('authorizations')
    // bytes32 0x-hex, derived from network and reference: one operation, one nonce.
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('reference', 'text', (c) => c.notNull())
    .addColumn('contract_address', 'text', (c) => c.notNull())
    .addColumn('from_address', 'text', (c) => c.notNull())
    .addColumn('to_address', 'text', (c) => c.notNull())
    .addColumn('value', 'text', (c) => c.notNull())
    // Unix seconds; the chain refuses the authorization from then on.
    .addColumn('valid_before', 'bigint', (c) => c.notNull())
    // A block at or before the signature: where a search for the nonce's events starts.
    .addColumn('from_block', 'bigint', (c) => c.notNull())
    // reserved | submitted | used | canceled | expired | void
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('cancel_tx_hash', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('authorizations_reference').on('authorizations').columns(['network', 'reference']).unique().execute();
  await db.schema.createIndex('authorizations_holds').on('authorizations')
    .columns(['network', 'contract_address', 'from_address', 'status']).execute();
  await db.schema.createIndex('authorizations_open').on('authorizations').columns(['status', 'network']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('authorizations').execute();
}
