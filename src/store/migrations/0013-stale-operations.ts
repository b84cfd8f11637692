import type { Kysely } from 'kysely';

// The periodic sweep of operations interrupted mid-run (src/payments/cancel-payment.ts,
// src/rewards/settle-stale-reward.ts) looks for cancellations still pending and rewards still
// claiming or canceling, untouched for a while: by status and age, without a scan of either table.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('payment_cancellations_status_updated').on('payment_cancellations').columns(['status', 'updated_at']).execute();
  await db.schema.createIndex('rewards_status_updated').on('rewards').columns(['status', 'updated_at']).execute();
}
