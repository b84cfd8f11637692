import type { Kysely } from 'kysely';

// Authorizations by the transaction that carries them: the console counts the transfers each mined
// settlement executed (its gas per transfer), and the journal moves a batch's authorizations to the
// hash of the version that was mined. Without it each such lookup read every authorization ever made.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('authorizations_tx_hash').on('authorizations').column('tx_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('authorizations_tx_hash').execute();
}
