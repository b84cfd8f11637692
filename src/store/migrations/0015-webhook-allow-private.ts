import type { Kysely } from 'kysely';

// A webhook endpoint the operator opted in to a private address (`vixpay webhook add --allow-private`,
// docs/webhooks.md "Addresses"): 1 lets its deliveries connect to loopback, private and link-local
// addresses. Endpoints from before are 0: public addresses only (re-add one with the flag to opt in).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').addColumn('allow_private', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('webhook_endpoints').dropColumn('allow_private').execute();
}
