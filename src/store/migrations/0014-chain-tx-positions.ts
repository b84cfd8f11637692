import type { Kysely } from 'kysely';

// Where each relayed transaction was mined: its block's timestamp and its index in the block, beside
// the block number. A managed anvil that crashed comes back from its last checkpoint without the
// blocks mined since; the relayer mines them again from its journal in the same order and at the
// same timestamps (src/chain/anvil-rebuild-lost-blocks.ts), so every transfer authorization executes as it did
// (its `validBefore` is judged against the original time) and every later one finds the same balances.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chain_txs').addColumn('block_timestamp', 'bigint').execute();
  await db.schema.alterTable('chain_txs').addColumn('tx_index', 'integer').execute();
}
