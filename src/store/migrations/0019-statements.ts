import type { Kysely } from 'kysely';

// Daily statements (src/statements, docs/statements.md). A statement walks the day's mined
// transactions of a network in chain order (block number, then position) and finds the store's
// payments, refunds, reward claims and reward give-backs each carries: these indexes make every step
// an index lookup, so a day of 100,000 payments reads no other day's rows. `statement_days` records
// each (store, day) whose `statement.ready` webhook was written: once, whichever instance sees the
// day close first.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('chain_txs_network_block').on('chain_txs').columns(['network', 'block_number', 'tx_index']).execute();
  await db.schema.createIndex('chain_txs_tx_hash').on('chain_txs').column('tx_hash').execute();
  await db.schema.createIndex('payment_cancellations_transfer_tx').on('payment_cancellations').column('transfer_transaction_id').execute();
  await db.schema.createIndex('rewards_claim_tx').on('rewards').column('claim_transaction_id').execute();
  await db.schema.createIndex('rewards_cancel_tx').on('rewards').column('cancel_transaction_id').execute();
  await db.schema
    .createTable('statement_days')
    .addColumn('tid', 'text', (c) => c.notNull())
    // yyyy-mm-dd in the platform's time zone.
    .addColumn('statement_date', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('statement_days_pk', ['tid', 'statement_date'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('statement_days').ifExists().execute();
  for (const index of ['chain_txs_network_block', 'chain_txs_tx_hash', 'payment_cancellations_transfer_tx', 'rewards_claim_tx', 'rewards_cancel_tx']) {
    await db.schema.dropIndex(index).ifExists().execute();
  }
}
