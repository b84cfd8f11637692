import { closeSync, mkdirSync, openSync } from 'node:fs';
import path from 'node:path';
import { Kysely, Migrator, sql, type Dialect } from 'kysely';
import pg from 'pg';
import { createNodeSqliteDialect } from './sqlite-dialect.ts';
import { AvailabilityMappedPostgresDialect } from './postgres-unavailable.ts';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
export type DbDialectName = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** PostgreSQL connection string; without one, SQLite in `dataDir/vixpay.sqlite`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /**
   * Told of an error on a PostgreSQL connection outside a query (terminated by a failover, a pooler, an
   * idle timeout or a restart). The pool drops that connection and opens a new one when next needed;
   * without a listener, node would end the process on the unhandled 'error' event.
   */
  onConnectionError?: (error: Error) => void;
}

export interface Store {
  db: Db;
  dialect: DbDialectName;
  close(): Promise<void>;
}

/** int8 (bigint) columns hold millisecond timestamps and nonces: all safe integers. */
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

/** Opens the store and brings its schema up to date (one set of migrations for both dialects). */
export async function openStore(options: StoreOptions): Promise<Store> {
  let dialect: Dialect;
  let name: DbDialectName;
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10, types: pgTypes });
    const onError = (error: Error) => options.onConnectionError?.(error);
    pool.on('error', onError);
    // A connection held outside a query (an advisory lock's) reports its loss on the client itself.
    pool.on('connect', (client) => client.on('error', onError));
    dialect = new AvailabilityMappedPostgresDialect({ pool });
    name = 'postgres';
  } else {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
    const file = path.join(options.dataDir, 'vixpay.sqlite');
    // Created 0600 before SQLite opens it: SQLite gives its -wal and -shm files the database's mode.
    closeSync(openSync(file, 'a', 0o600));
    dialect = createNodeSqliteDialect(file);
    name = 'sqlite';
  }
  const db = new Kysely<Database>({ dialect });
  // On PostgreSQL the migration bookkeeping lives in the schema the tables go to (the search_path's
  // first). Without naming it, Kysely takes a `kysely_migration_lock` table in any other schema of the
  // database for its own and never creates one here: a second platform in its own schema then fails.
  const migrationTableSchema = name === 'postgres'
    ? (await sql<{ schema: string }>`select current_schema() as schema`.execute(db)).rows[0]?.schema
    : undefined;
  const migrator = new Migrator({
    db, provider: { getMigrations: async () => migrations }, ...(migrationTableSchema && { migrationTableSchema }),
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    await db.destroy();
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new Error(`database migration ${failed} failed`, { cause: error });
  }
  return { db, dialect: name, close: () => db.destroy() };
}
