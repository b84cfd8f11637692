import type { Kysely } from 'kysely';

// DIDs, their keys and used login presentations (src/did). Same rules as 0001: text, integer and
// bigint only; timestamps are epoch milliseconds; JSON as text.
export async function up(db: Kysely<unknown>): Promise<void> {
  // Veramo's key store: public key data only.
  await db.schema
    .createTable('did_keys')
    .addColumn('kid', 'text', (c) => c.primaryKey())
    .addColumn('kms', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('public_key_hex', 'text', (c) => c.notNull())
    .addColumn('meta_json', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  // Veramo's private key store: each key sealed by the key vault, never in the clear.
  await db.schema
    .createTable('did_private_keys')
    .addColumn('alias', 'text', (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('private_key_enc', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  // Veramo's DID store, plus `role`: 'issuer' and 'verifier' mark the system DIDs.
  await db.schema
    .createTable('dids')
    .addColumn('did', 'text', (c) => c.primaryKey())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('alias', 'text')
    .addColumn('controller_key_id', 'text')
    .addColumn('key_ids_json', 'text', (c) => c.notNull())
    .addColumn('services_json', 'text', (c) => c.notNull())
    .addColumn('role', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('dids_role').on('dids').column('role').execute();

  // SHA-256 of every VP JWT accepted for login: a replay finds its hash here.
  await db.schema
    .createTable('used_presentations')
    .addColumn('jwt_hash', 'text', (c) => c.primaryKey())
    .addColumn('holder_did', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('used_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('used_presentations_expires').on('used_presentations').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['used_presentations', 'dids', 'did_private_keys', 'did_keys']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
