import type { Kysely } from 'kysely';

// Users and website login requests (src/identity). Same rules as 0001: text, integer and bigint
// only; timestamps are epoch milliseconds.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('tel_no', 'text')
    .addColumn('email', 'text')
    .addColumn('wallet_address', 'text')
    .addColumn('did', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // Both dialects allow any number of NULLs in a unique index: a DID is unique once set.
  await db.schema.createIndex('users_did').on('users').column('did').unique().execute();

  await db.schema
    .createTable('website_logins')
    // SHA-256 of the requestId: a copy of the table does not hand out live login requests.
    .addColumn('request_id_hash', 'text', (c) => c.primaryKey())
    .addColumn('site', 'text', (c) => c.notNull())
    .addColumn('requester_ip', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('completed_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('website_logins_expires').on('website_logins').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['website_logins', 'users']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
