import type { Kysely } from 'kysely';

// Receipts (src/receipts) and operator accounts of the console (src/console). Same column rules as
// 0001: text, integer and bigint only; timestamps are epoch milliseconds.
export async function up(db: Kysely<unknown>): Promise<void> {
  // One verifiable credential per approval, cancellation or reward claim, issued the first time it
  // is read and kept: (kind, source_id) is unique, so two concurrent first reads keep one receipt.
  await db.schema
    .createTable('receipts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    // payment | cancellation | reward_claim
    .addColumn('kind', 'text', (c) => c.notNull())
    // payments.id, payment_cancellations.id or rewards.id
    .addColumn('source_id', 'text', (c) => c.notNull())
    .addColumn('tid', 'text', (c) => c.notNull())
    // tran_no of a payment or cancellation, reward_id of a reward claim
    .addColumn('reference', 'text', (c) => c.notNull())
    // The account the receipt is for (payer of a payment, receiver of a refund or reward).
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('transaction_id', 'text', (c) => c.notNull())
    .addColumn('issuer', 'text', (c) => c.notNull())
    // The credential's JWT (its W3C form is derived from it).
    .addColumn('credential_jwt', 'text', (c) => c.notNull())
    .addColumn('issued_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('receipts_source').on('receipts').columns(['kind', 'source_id']).unique().execute();
  await db.schema.createIndex('receipts_store').on('receipts').columns(['tid', 'reference']).execute();
  await db.schema.createIndex('receipts_user').on('receipts').columns(['user_address', 'issued_at']).execute();

  // Console operators: not users of the platform, and never holders of a user's JWT.
  await db.schema
    .createTable('operators')
    .addColumn('username', 'text', (c) => c.primaryKey())
    // argon2id (src/identity/password-hasher.ts)
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('operator_sessions')
    // SHA-256 of the session cookie's random token: a copy of the table logs nobody in.
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('username', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('operator_sessions_expiry').on('operator_sessions').column('expires_at').execute();

  // The console's figures: payments per minute, search by transaction id and by user.
  await db.schema.createIndex('payments_created').on('payments').column('created_at').execute();
  await db.schema.createIndex('payments_user_address').on('payments').column('user_address').execute();
  await db.schema.createIndex('rewards_user_address').on('rewards').column('user_address').execute();
  await db.schema.createIndex('chain_txs_relayer_status').on('chain_txs').columns(['relayer', 'status']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const index of ['payments_created', 'payments_user_address', 'rewards_user_address', 'chain_txs_relayer_status']) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
  for (const table of ['operator_sessions', 'operators', 'receipts']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
