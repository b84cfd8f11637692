import type { Kysely } from 'kysely';

// Store webhooks (src/webhooks, docs/webhooks.md): endpoints, the events outbox, and one delivery
// row per event and endpoint. Same column rules as 0001 (epoch milliseconds, text).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('webhook_endpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Null: every store's events (a `vixpay listen` session).
    .addColumn('tid', 'text')
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    // Signing secrets, encrypted with the key vault.
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('previous_secret_enc', 'text')
    .addColumn('previous_secret_expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_tid').on('webhook_endpoints').column('tid').execute();

  await db.schema
    .createTable('webhook_events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tid', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    // JSON of the event's data (without res_code of a failure, added when it is sent).
    .addColumn('data', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_events_created').on('webhook_events').column('created_at').execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    // pending | delivered | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    // Due time of the next attempt; while an instance attempts it, the end of its lease.
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['status', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').column('endpoint_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['webhook_deliveries', 'webhook_events', 'webhook_endpoints']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
