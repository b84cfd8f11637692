import type { Kysely } from 'kysely';

// What each relayed transaction cost once mined, from its receipt: the gas it used and the fee paid
// (gasUsed × effectiveGasPrice, in wei, as a decimal string). The platform pays the gas of every
// payment; the console's per-network gas figures and the operator's statements add these up. The
// index serves "mined on this network since" (updated_at is when it was recorded mined).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chain_txs').addColumn('gas_used', 'bigint').execute();
  await db.schema.alterTable('chain_txs').addColumn('fee_wei', 'text').execute();
  await db.schema.createIndex('chain_txs_network_updated').on('chain_txs').columns(['network', 'updated_at']).execute();
}
