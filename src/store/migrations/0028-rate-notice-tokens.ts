import type { Kysely } from 'kysely';

// A rate notice names the token it prices (docs/payments.md "Rate notices per token"): `network` and
// `contract_address` of a token on the operator allow-list, or both '' for the platform token (VIXP)
// of the payment network. Rows from before are VIXP notices and stay so. The index of a day stays one
// sequence per currency across tokens, so an exchange_date_index still names one notice of its
// currency (the primary key is unchanged).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('rate_notices').addColumn('network', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('rate_notices').addColumn('contract_address', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.createIndex('rate_notices_token_latest').on('rate_notices')
    .columns(['currency', 'network', 'contract_address', 'published_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('rate_notices_token_latest').execute();
  for (const column of ['contract_address', 'network']) await db.schema.alterTable('rate_notices').dropColumn(column).execute();
}
