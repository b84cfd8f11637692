import type { Kysely } from 'kysely';

// What a relayed transaction cost beyond execution on an OP-stack network (optimism, opbnb): the L1
// data fee its receipt states (`l1Fee`, priced on the transaction's compressed size) and the operator
// fee (Isthmus), in wei as decimal strings beside `fee_wei` (gasUsed × effectiveGasPrice, migration
// 0016). NULL on other networks and on rows recorded before. The operator's day and the console add
// the three (docs/statements.md).
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chain_txs').addColumn('l1_fee_wei', 'text').execute();
  await db.schema.alterTable('chain_txs').addColumn('operator_fee_wei', 'text').execute();
}
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('chain_txs').dropColumn('operator_fee_wei').execute();
  await db.schema.alterTable('chain_txs').dropColumn('l1_fee_wei').execute();
}
