import { sql, type Kysely } from 'kysely';

// x402 settlements keep `valid_before` exactly as the payer signed it: a uint256 in its canonical
// decimal form (docs/x402.md#numbers), as TEXT. The bigint column of 0018 held at most 2^63 − 1 and,
// on SQLite, was read back as a JavaScript number (rounded above 2^53, or refused): the chain then
// got a validBefore that was not the signed one, and one such row stopped the settlement sweep.
// Existing rows are copied with their value (CAST of an integer to text is exact on both databases);
// the table is rebuilt (SQLite cannot change a column's type) with every index it had.
export async function up(db: Kysely<unknown>): Promise<void> {
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
  await sql`insert into x402_settlements_0021 (nonce, network, payer, pay_to, asset, amount, valid_before, signature, key_id, status, tx_hash, error_reason, created_at, updated_at)
    select nonce, network, payer, pay_to, asset, amount, cast(valid_before as text), signature, key_id, status, tx_hash, error_reason, created_at, updated_at
    from x402_settlements`.execute(db);
  await db.schema.dropTable('x402_settlements').execute();
  await db.schema.alterTable('x402_settlements_0021').renameTo('x402_settlements').execute();
  await db.schema.createIndex('x402_settlements_status').on('x402_settlements').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('x402_settlements_tx_hash').on('x402_settlements').column('tx_hash').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  // Back to bigint: a value above 2^63 − 1 cannot be kept there; such rows are failed first.
  await sql`update x402_settlements set valid_before = '9223372036854775807', status = case when status = 'accepted' then 'failed' else status end
    where length(valid_before) > 19 or (length(valid_before) = 19 and valid_before > '9223372036854775807')`.execute(db);
  await db.schema.dropIndex('x402_settlements_status').ifExists().execute();
  await db.schema.dropIndex('x402_settlements_tx_hash').ifExists().execute();
  await db.schema.alterTable('x402_settlements').renameTo('x402_settlements_0021').execute();
  await db.schema
    .createTable('x402_settlements')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'bigint', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into x402_settlements select nonce, network, payer, pay_to, asset, amount, cast(valid_before as bigint), signature, key_id, status, tx_hash,
    error_reason, created_at, updated_at from x402_settlements_0021`.execute(db);
  await db.schema.dropTable('x402_settlements_0021').execute();
  await db.schema.createIndex('x402_settlements_status').on('x402_settlements').columns(['status', 'created_at']).execute();
  await db.schema.createIndex('x402_settlements_tx_hash').on('x402_settlements').column('tx_hash').execute();
}
