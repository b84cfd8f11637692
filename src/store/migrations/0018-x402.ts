import type { Kysely } from 'kysely';

// The x402 facilitator (src/x402, docs/x402.md). `facilitator_keys`: the API keys of resource servers
// (only a SHA-256 of each is kept; `tid` names the store whose webhook endpoints get the key's x402
// events). `x402_settlements`: every payment accepted by POST /x402/settle, keyed by its EIP-3009
// nonce (the same key as its `authorizations` row, which holds its funds while in flight), with the
// payer's signature so that a settle interrupted by a crash is finished after the restart. Same
// column rules as 0001.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('facilitator_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('tid', 'text')
    // Requests per second the key may make (a burst of 10 seconds' worth).
    .addColumn('rate_per_second', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
  await db.schema
    .createTable('x402_settlements')
    // bytes32 0x-hex, lowercase: the authorization's nonce.
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    // Ours (ethereum, optimism, …); the x402 network is eip155:<chain id>.
    .addColumn('network', 'text', (c) => c.notNull())
    .addColumn('payer', 'text', (c) => c.notNull())
    .addColumn('pay_to', 'text', (c) => c.notNull())
    .addColumn('asset', 'text', (c) => c.notNull())
    // Base units.
    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'bigint', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    // accepted | settled | failed
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('x402_settlements_status').on('x402_settlements').columns(['status', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('x402_settlements').ifExists().execute();
  await db.schema.dropTable('facilitator_keys').ifExists().execute();
}
