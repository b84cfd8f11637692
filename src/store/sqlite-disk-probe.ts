import { open, rm, statfs } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { Db } from './db.ts';

/**
 * Free space below which the SQLite store's directory counts as full: SQLite's WAL grows up to 1,000
 * pages of 4 KiB between checkpoints, and a checkpoint may grow the database file by as much again.
 */
export const minimumFreeBytes = 8 * 1024 * 1024;
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);

/**
 * `/readyz`'s `disk` check of a SQLite store: down while the directory of its database file (DATA_DIR)
 * has less than `minimumFreeBytes` available, or refuses a small write (a quota, a read-only
 * remount, no inodes left), with a message naming the directory; up again as soon as there is room.
 * While it is down, writes fail with `store.full` and nothing is done (src/store/sqlite-dialect.ts).
 */
export function sqliteDiskProbe(db: Db): () => Promise<void> {
  let directory: Promise<string> | undefined;
  const directoryOf = () => {
    directory ??= sql<{ name: string; file: string }>`pragma database_list`.execute(db).then(({ rows }) => {
      const main = rows.find((row) => row.name === 'main');
      if (!main?.file) throw new Error('the SQLite store has no database file');
      return path.dirname(main.file);
    });
    directory.catch(() => { directory = undefined; });
    return directory;
  };
  return async () => {
    const dir = await directoryOf();
    const stats = await statfs(dir);
    const available = stats.bavail * stats.bsize;
    if (available < minimumFreeBytes) {
      throw new Error(`disk full: ${mib(available)} MiB available in ${dir}, the store needs ${mib(minimumFreeBytes)} MiB`);
    }
    const file = path.join(dir, `.readyz-${process.pid}`);
    try {
      const handle = await open(file, 'w', 0o600);
      try {
        await handle.write(Buffer.alloc(4096));
        await handle.datasync();
      } finally {
        await handle.close();
      }
    } catch (error) {
      throw new Error(`disk full: ${dir} accepts no write (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { cause: error });
    } finally {
      await rm(file, { force: true });
    }
  };
}
