import type { Db } from './db.ts';

/** Journaled transactions still `signed` (not known to be mined), per network: one grouped count. */
export async function countJournalBacklog(db: Db): Promise<Record<string, number>> {
  const rows = await db.selectFrom('chain_txs').select(['network', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', '=', 'signed').groupBy('network').execute();
  return Object.fromEntries(rows.map((row) => [row.network, Number(row.count)]));
}

/**
 * Journaled transactions still `signed` that were journaled before `before` (ms), per network: their
 * count and when the oldest was journaled. None when the backlog moves.
 */
export async function findStuckBacklog(db: Db, before: number): Promise<Array<{ network: string; count: number; oldest: number }>> {
  const rows = await db.selectFrom('chain_txs')
    .select(['network', (eb) => eb.fn.countAll<number>().as('count'), (eb) => eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'signed').where('created_at', '<', before).groupBy('network').execute();
  return rows.map((row) => ({ network: row.network, count: Number(row.count), oldest: Number(row.oldest) }));
}

/** Journaled transactions still `signed`, per network and relayer lane address. */
export async function countPendingByRelayer(db: Db): Promise<Record<string, Record<string, number>>> {
  const rows = await db.selectFrom('chain_txs').select(['network', 'relayer', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', '=', 'signed').groupBy(['network', 'relayer']).execute();
  const counts: Record<string, Record<string, number>> = {};
  for (const row of rows) (counts[row.network] ??= {})[row.relayer] = Number(row.count);
  return counts;
}
