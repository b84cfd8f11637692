import { open, type FileHandle } from 'node:fs/promises';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type SqliteDatabase } from 'kysely';
import { DomainError } from '#shared/errors.ts';

/** Prepared statements kept per connection (the platform's queries are a few hundred distinct texts). */
const statementCacheSize = 1_000;

/**
 * Kysely's SqliteDialect over node:sqlite (the better-sqlite3 interface, with parameters spread and
 * `reader` derived from the result columns), with two changes to its cost:
 *
 * - **Prepared statements** are cached by SQL text instead of compiled again for every query.
 * - **Transactions begin immediate**, taking the write lock at once. Another process may hold the
 *   same file (the server and an operator's `vixpay` command). A deferred transaction that reads, then
 *   writes fails its upgrade at once with "database is locked" (SQLITE_BUSY_SNAPSHOT, no busy wait)
 *   when the other process committed after its read; begun immediate it waits for the lock as
 *   `busy_timeout` says. Within one process transactions already run one at a time (one connection).
 * - **Group commit.** Commits run with `synchronous = NORMAL` (no fsync inside SQLite's synchronous
 *   call, which would stall the event loop), and every query that wrote anything returns only once
 *   the WAL file has been fsynced by Node's thread pool. Writers that finish while an fsync is under
 *   way share the next one. The guarantee is `synchronous = FULL`'s: nothing is answered before it
 *   is on disk, so it survives `kill -9` and power loss (docs/decisions/transfers.md "Group commit").
 * - **A full disk** (SQLITE_FULL: the WAL or the database file could not grow) is `store.full`, a
 *   domain error: nothing of that statement or transaction was written (SQLite rolls the transaction
 *   back itself), and the caller answers that nothing was done. Kysely's own rollback after SQLite's
 *   is then a no-op, so the error it reports is the disk's, not "no transaction is active".
 */
export function createNodeSqliteDialect(file: string): SqliteDialect {
  const durability = groupCommit(`${file}-wal`);
  const config = {
    database: async () => {
      const db = new DatabaseSync(file);
      db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000;');
      return adapt(db, durability);
    },
  };
  return new (class extends SqliteDialect {
    override createDriver(): Driver {
      return new (class extends SqliteDriver {
        override async beginTransaction(connection: DatabaseConnection): Promise<void> {
          await connection.executeQuery(CompiledQuery.raw('begin immediate'));
        }

        override async releaseConnection(): Promise<void> {
          await super.releaseConnection();
          await durability.settle();
        }
      })(config);
    }
  })(config);
}

/**
 * Counts writes and fsyncs the WAL file for them: `settle` resolves once every write counted before
 * it was called is on disk, with one fsync for however many writers wait at once. The WAL file is
 * opened once and kept open (SQLite deletes it only when its last connection closes, and this
 * connection is open until `close`); `datasync` suffices, as it does for SQLite itself: it also
 * writes the file's new size.
 */
function groupCommit(walFile: string) {
  let written = 0;
  let synced = 0;
  let syncing: Promise<void> | undefined;
  let wal: FileHandle | undefined;
  const fsyncWal = async (upTo: number) => {
    try {
      wal ??= await open(walFile, 'r');
      await wal.datasync();
    } catch (error) {
      // No WAL file: everything was checkpointed into the database file, which SQLite fsyncs itself.
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    synced = Math.max(synced, upTo);
  };
  return {
    wrote() { written++; },
    async settle(): Promise<void> {
      const target = written;
      while (synced < target) {
        syncing ??= fsyncWal(written).finally(() => { syncing = undefined; });
        await syncing;
      }
    },
    async close(): Promise<void> {
      await syncing?.catch(() => undefined);
      await wal?.close();
      wal = undefined;
    },
  };
}

/** SQLITE_FULL (13), as node:sqlite reports it in `errcode` (an extended code keeps it in its low byte). */
const sqliteFull = 13;

/** A full disk's SQLite error as `store.full`; any other error unchanged. */
function storageError(error: unknown): unknown {
  const errcode = (error as { errcode?: unknown } | null)?.errcode;
  if (typeof errcode === 'number' && (errcode & 0xff) === sqliteFull) {
    return new DomainError('store.full', 'the platform\'s storage is full: nothing was done, try again later', { cause: error });
  }
  return error;
}

function translated<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    throw storageError(error);
  }
}

function adapt(db: DatabaseSync, durability: ReturnType<typeof groupCommit>): SqliteDatabase {
  const wrote = durability.wrote;
  const statements = new Map<string, { statement: StatementSync; reader: boolean; writes: boolean }>();
  const prepare = (sql: string) => {
    let prepared = statements.get(sql);
    if (!prepared) {
      const statement = db.prepare(sql);
      // Anything but a plain select may write (insert/update/delete … returning included).
      prepared = { statement, reader: statement.columns().length > 0, writes: !/^\s*select\b/i.test(sql) };
      if (statements.size >= statementCacheSize) statements.delete(statements.keys().next().value as string);
      statements.set(sql, prepared);
    }
    return prepared;
  };
  return {
    close: () => {
      db.close();
      // After the database: an fsync in flight finishes first.
      void durability.close();
    },
    prepare(sql) {
      // SQLite ends a transaction itself on some errors (SQLITE_FULL among them): Kysely's rollback after it has nothing to do.
      if (/^\s*rollback\s*$/i.test(sql) && !db.isTransaction) return { reader: false, all: () => [], run: () => ({ changes: 0, lastInsertRowid: 0 }), iterate: () => [][Symbol.iterator]() };
      const { statement, reader, writes } = translated(() => prepare(sql));
      const params = (values: ReadonlyArray<unknown>) => values as SQLInputValue[];
      return {
        reader,
        all: (values) => {
          const rows = translated(() => statement.all(...params(values)));
          if (writes) wrote();
          return rows;
        },
        run: (values) => {
          const result = translated(() => statement.run(...params(values)));
          wrote();
          return result;
        },
        iterate: (values) => translated(() => statement.iterate(...params(values))),
      };
    },
  };
}
