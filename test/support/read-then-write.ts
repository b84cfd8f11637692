import type { Store } from '../../src/store/db.ts';

/**
 * `rounds` transactions that each read, pause (another process commits meanwhile), then write one
 * row: the shape of the platform's transactions (read a claim, then record it). Run by the SQLite
 * dialect's test in its own thread and in a worker that stands for a second process.
 */
export async function readThenWrite(store: Store, side: string, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await store.db.transaction().execute(async (trx) => {
      await trx.selectFrom('relayer_nonces').selectAll().execute();
      await new Promise((resolve) => setTimeout(resolve, 2));
      await trx.insertInto('relayer_nonces').values({ network: 'ethereum', address: `${side}-${i}`, next_nonce: i }).execute();
    });
  }
}
