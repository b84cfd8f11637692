import type { Kysely } from 'kysely';

// Migrations use only types both SQLite and PostgreSQL understand: text, integer, bigint.
// Timestamps are epoch milliseconds (bigint); token amounts are base-unit decimal strings (text).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('address', 'text', (c) => c.primaryKey())
    .addColumn('private_key_enc', 'text', (c) => c.notNull())
    .addColumn('secret_key_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('temp_keys')
    .addColumn('key_hash', 'text', (c) => c.primaryKey())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('key_type', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('temp_keys_expires').on('temp_keys').column('expires_at').execute();

  await db.schema
    .createTable('relayer_nonces')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('next_nonce', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('relayer_nonces_pk', ['network', 'address'])
    .execute();

  await db.schema
    .createTable('chain_txs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('reference', 'text')
    .addColumn('relayer', 'text', (c) => c.notNull())
    .addColumn('nonce', 'bigint', (c) => c.notNull())
    .addColumn('raw_tx', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull().unique())
    .addColumn('from_address', 'text')
    .addColumn('to_address', 'text')
    .addColumn('contract_address', 'text')
    .addColumn('amount', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('chain_txs_status').on('chain_txs').columns(['status', 'network']).execute();
  await db.schema.createIndex('chain_txs_nonce').on('chain_txs').columns(['network', 'relayer', 'nonce']).unique().execute();

  await db.schema
    .createTable('deployments')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('deployments_pk', ['network', 'name'])
    .execute();

  await db.schema
    .createTable('tokens')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('contract_address', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('decimals', 'integer', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('tokens_pk', ['network', 'contract_address'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['tokens', 'deployments', 'chain_txs', 'relayer_nonces', 'temp_keys', 'accounts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
