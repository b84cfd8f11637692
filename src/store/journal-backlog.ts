import type { Db } from './db.ts';

/** Journaled transactions still `signed` (not known to be mined), per network: one grouped count. */
export async function countJournalBacklog(db: Db): Promise<Record<string, number>> {
  const rows = await db.selectFrom('chain_txs').select(['network', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', '=', 'signed').groupBy('network').execute();
  return Object.fromEntries(rows.map((row) => [row.network, Number(row.count)]));
}

/** Journaled transactions still `signed`, per network and relayer lane address. */
export async function countPendingByRelayer(db: Db): Promise<Record<string, Record<string, number>>> {
  const rows = await db.selectFrom('chain_txs').select(['network', 'relayer', (eb) => eb.fn.countAll<number>().as('count')])
    .where('status', '=', 'signed').groupBy(['network', 'relayer']).execute();
  const counts: Record<string, Record<string, number>> = {};
  for (const row of rows) (counts[row.network] ??= {})[row.relayer] = Number(row.count);
  return counts;
}
