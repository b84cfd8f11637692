import type { Kysely } from 'kysely';

// Stores, rate notices, payments, cancellations and rewards (src/payments, src/rewards). Same rules
// as 0001: text, integer and bigint only; timestamps are epoch milliseconds; token amounts are
// base-unit decimal strings; currency amounts and rates are the decimal strings as given.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stores')
    .addColumn('tid', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('settlement_address', 'text', (c) => c.notNull())
    // SHA-256 of the POS API key: a copy of the table does not let anyone act as a POS.
    .addColumn('api_key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('rate_notices')
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('notice_date', 'text', (c) => c.notNull())
    .addColumn('notice_index', 'integer', (c) => c.notNull())
    .addColumn('rate', 'text', (c) => c.notNull())
    .addColumn('published_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_notices_pk', ['currency', 'notice_date', 'notice_index'])
    .execute();
  await db.schema.createIndex('rate_notices_latest').on('rate_notices').columns(['currency', 'published_at']).execute();

  // Approval and cancellation numbers: one counter row per name (e.g. a day).
  await db.schema
    .createTable('number_sequences')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('next_value', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('payments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tid', 'text', (c) => c.notNull())
    .addColumn('tran_no', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_uuid', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text')
    .addColumn('settlement_address', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('contract_address', 'text')
    .addColumn('token_symbol', 'text')
    .addColumn('token_amount', 'text')
    .addColumn('exchange_amount', 'text', (c) => c.notNull())
    .addColumn('exchange_currency', 'text', (c) => c.notNull())
    .addColumn('exchange_rate', 'text')
    .addColumn('exchange_date_index', 'text')
    .addColumn('transfer_transaction_id', 'text')
    .addColumn('approval_no', 'text', (c) => c.unique())
    .addColumn('approval_date', 'text')
    .addColumn('refunded_amount', 'text', (c) => c.notNull())
    .addColumn('failure_code', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // A tran_no is one payment per store: a POS retry finds the original, never makes a second.
  await db.schema.createIndex('payments_tid_tran_no').on('payments').columns(['tid', 'tran_no']).unique().execute();
  await db.schema.createIndex('payments_transfer_tx').on('payments').column('transfer_transaction_id').execute();

  await db.schema
    .createTable('payment_cancellations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('payment_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token_amount', 'text', (c) => c.notNull())
    .addColumn('exchange_amount', 'text')
    .addColumn('transfer_transaction_id', 'text')
    .addColumn('cancel_no', 'text', (c) => c.unique())
    .addColumn('cancel_date', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('payment_cancellations_payment').on('payment_cancellations').column('payment_id').execute();

  await db.schema
    .createTable('rewards')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('tid', 'text', (c) => c.notNull())
    .addColumn('reward_reason', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('settlement_address', 'text', (c) => c.notNull())
    .addColumn('contract_address', 'text', (c) => c.notNull())
    .addColumn('token_symbol', 'text', (c) => c.notNull())
    .addColumn('token_amount', 'text', (c) => c.notNull())
    .addColumn('exchange_amount', 'text', (c) => c.notNull())
    .addColumn('exchange_currency', 'text', (c) => c.notNull())
    .addColumn('exchange_rate', 'text', (c) => c.notNull())
    .addColumn('exchange_date_index', 'text', (c) => c.notNull())
    .addColumn('reward_date', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('user_address', 'text')
    .addColumn('claim_transaction_id', 'text')
    .addColumn('claimed_at', 'bigint')
    .addColumn('cancel_no', 'text', (c) => c.unique())
    .addColumn('cancel_date', 'text')
    .addColumn('cancel_transaction_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // The same tid and reward_reason never makes a second reward.
  await db.schema.createIndex('rewards_tid_reason').on('rewards').columns(['tid', 'reward_reason']).unique().execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['rewards', 'payment_cancellations', 'payments', 'number_sequences', 'rate_notices', 'stores']) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
