import type { Kysely } from 'kysely';

// Idempotency keys (src/pay/idempotent-pay.ts, src/commerce/once-per-tran-no.ts): one row per key of
// a caller's scope (`pay:<userId>` for REST pay's Idempotency-Key, `pos:<tid>:<call>` for a POS
// unary call's tran_no). The row is claimed before the operation runs, so of concurrent requests
// with one key exactly one runs; it then keeps the outcome to answer retries. Same column rules as 0001.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'text', (c) => c.notNull())
    // sha256 hex of the request's parameters (never of a secret): another request under the same key is refused.
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    // running | pending | done
    .addColumn('state', 'text', (c) => c.notNull())
    // The reference of the operation's transfer (its authorization), when it has one.
    .addColumn('reference', 'text')
    // JSON of the outcome answered (done, pending).
    .addColumn('outcome', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Swept after this (ms).
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['scope', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').column('expires_at').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('idempotency_keys').ifExists().execute();
}
