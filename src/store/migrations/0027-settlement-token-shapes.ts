import { sql, type Kysely } from 'kysely';

// What `vixpay token allow` read of each allowed token (src/chain/token-inspection.ts): its name,
// decimals, the EIP-712 version of its EIP-3009 domain (NULL: no EIP-3009) and how the platform moves
// it from custodial accounts (`eip3009`, or `account`: the account contract through EIP-7702). Rows
// from before are tokens deployed through the platform (VixpToken: EIP-3009, version "1"): their
// name and decimals come from `tokens`. Plain SQL that SQLite and PostgreSQL both run.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('settlement_tokens').addColumn('name', 'text', (c) => c.notNull().defaultTo('')).execute();
  await db.schema.alterTable('settlement_tokens').addColumn('decimals', 'integer', (c) => c.notNull().defaultTo(18)).execute();
  await db.schema.alterTable('settlement_tokens').addColumn('eip712_version', 'text').execute();
  await db.schema.alterTable('settlement_tokens').addColumn('transfer_path', 'text', (c) => c.notNull().defaultTo('eip3009')).execute();
  await sql`UPDATE settlement_tokens SET eip712_version = '1',
    name = COALESCE((SELECT t.name FROM tokens t WHERE t.network = settlement_tokens.network AND t.contract_address = settlement_tokens.contract_address), symbol),
    decimals = COALESCE((SELECT t.decimals FROM tokens t WHERE t.network = settlement_tokens.network AND t.contract_address = settlement_tokens.contract_address), 18)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['transfer_path', 'eip712_version', 'decimals', 'name']) {
    await db.schema.alterTable('settlement_tokens').dropColumn(column).execute();
  }
}
