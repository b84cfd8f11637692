import type { Kysely } from 'kysely';

// The operator allow-list of settlement tokens (src/commerce/settlement-token.ts). A network's VIXP
// is always accepted and never listed here; contract addresses are checksummed (viem getAddress).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('settlement_tokens')
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('contract_address', 'text', (c) => c.notNull())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('allowed_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('settlement_tokens_pk', ['network', 'contract_address'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('settlement_tokens').ifExists().execute();
}
