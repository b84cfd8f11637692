import type { Kysely } from 'kysely';

// x402 settlements by the transaction that carried them: a store's statement (src/statements) finds
// the x402 payments into its settlement account among each step's mined transactions, as it finds
// payments, refunds and rewards (0019). Without it each step read every settlement ever made.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('x402_settlements_tx_hash').on('x402_settlements').column('tx_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('x402_settlements_tx_hash').ifExists().execute();
}
