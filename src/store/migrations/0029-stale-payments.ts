import type { Kysely } from 'kysely';

// The periodic sweep settles payments still pending past their stale window
// (src/payments/settle-stale-payment.ts): by status and age, without a scan of the table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('payments_status_updated').on('payments').columns(['status', 'updated_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('payments_status_updated').execute();
}
