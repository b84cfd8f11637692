import { sql, type Kysely } from 'kysely';

// An EIP-3009 nonce belongs to its authorizer and token (issue 27): an outside payer's authorization
// (x402) is keyed by network, token, payer and nonce, not by the nonce alone, so another payer (or the
// same payer on another network or token) may use the same nonce. The key is
// `<network>:<token>:<payer>:<nonce>`, lowercase (authorizationKey, src/chain/mined-receipt.ts):
// - `x402_settlements.id`, its new primary key (the table is rebuilt: SQLite cannot change a
//   primary key); `nonce` stays the EIP-3009 nonce;
// - the x402 rows of `authorizations` take it as their row key (`nonce`), and keep the EIP-3009
//   nonce in the new `chain_nonce` (null on the platform's own rows, whose key is their nonce);
// - the receipts of x402 payments name it as their source.
// Existing rows are rewritten in place; same column rules as 0001.
const key = (network: string, token: string, payer: string, nonce: string) =>
  sql<string>`lower(${sql.ref(network)}) || ':' || lower(${sql.ref(token)}) || ':' || lower(${sql.ref(payer)}) || ':' || lower(${sql.ref(nonce)})`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('authorizations').addColumn('chain_nonce', 'text').execute();
  await sql`update authorizations set chain_nonce = nonce, nonce = ${key('network', 'contract_address', 'from_address', 'nonce')}
    where reference like 'x402:%'`.execute(db);
  await db.schema
    .createTable('x402_settlements_0022')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into x402_settlements_0022 (id, nonce, network, payer, pay_to, asset, amount, valid_before, signature, key_id, status, tx_hash, error_reason, created_at, updated_at)
    select ${key('network', 'asset', 'payer', 'nonce')}, nonce, network, payer, pay_to, asset, amount, valid_before, signature, key_id, status, tx_hash, error_reason, created_at, updated_at
    from x402_settlements`.execute(db);
  await sql`update receipts set source_id = (select s.id from x402_settlements_0022 s where s.nonce = receipts.source_id)
    where kind = 'x402' and exists (select 1 from x402_settlements_0022 s where s.nonce = receipts.source_id)`.execute(db);
  await db.schema.dropTable('x402_settlements').execute();
  await db.schema.alterTable('x402_settlements_0022').renameTo('x402_settlements').execute();
  await db.schema.createIndex('x402_settlements_status').on('x402_settlements').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('x402_settlements_tx_hash').on('x402_settlements').column('tx_hash').execute();
  // GET /x402/settlements/{payer}/{nonce}.
  await db.schema.createIndex('x402_settlements_payer_nonce').on('x402_settlements').columns(['payer', 'nonce']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Fails (a primary key violation) once two payers' settlements share a nonce: then it cannot be undone.
  await db.schema
    .createTable('x402_settlements_0021')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into x402_settlements_0021 select nonce, network, payer, pay_to, asset, amount, valid_before, signature, key_id, status, tx_hash,
    error_reason, created_at, updated_at from x402_settlements`.execute(db);
  await sql`update receipts set source_id = (select s.nonce from x402_settlements s where s.id = receipts.source_id)
    where kind = 'x402' and exists (select 1 from x402_settlements s where s.id = receipts.source_id)`.execute(db);
  await db.schema.dropTable('x402_settlements').execute();
  await db.schema.alterTable('x402_settlements_0021').renameTo('x402_settlements').execute();
  await db.schema.createIndex('x402_settlements_status').on('x402_settlements').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('x402_settlements_tx_hash').on('x402_settlements').column('tx_hash').execute();
  await sql`update authorizations set nonce = chain_nonce where chain_nonce is not null`.execute(db);
  await db.schema.alterTable('authorizations').dropColumn('chain_nonce').execute();
}
