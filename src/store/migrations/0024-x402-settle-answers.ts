import type { Kysely } from 'kysely';

// The x402 settlements answered settled to a resource server (src/x402/repeated-payment.ts): a
// payment whose settle answered `settlement_pending` may be presented again (the buyer told to retry
// with the same PAYMENT-SIGNATURE) until one settle has answered it settled; from then on the same
// payment is refused as used. One row per settlement (x402_settlements.id), written by the first
// success answer; kept as long as the settlement. Same column rules as 0001.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('x402_settle_answers')
    .addColumn('settlement_id', 'text', (c) => c.primaryKey())
    // The facilitator key the success was answered to.
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('answered_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('x402_settle_answers').ifExists().execute();
}
