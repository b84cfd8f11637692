import type { Kysely } from 'kysely';

// x402 settlements keep `valid_after` as the payer signed it (issue 30): many clients sign
// `now − 600`, and the settlement contract now carries it, so the chain is called with exactly the
// signed value. Same form as `valid_before` (0021): the canonical uint256 decimal, as TEXT. Rows
// accepted before were all signed with 0 (anything else was refused), which the default gives them.
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('x402_settlements').addColumn('valid_after', 'text', (c) => c.notNull().defaultTo('0')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('x402_settlements').dropColumn('valid_after').execute();
}
