import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';

/** PostgreSQL of the test machine and CI (trust auth); VIXPAY_TEST_DATABASE_URL overrides it. */
export const testDatabaseUrl = process.env.VIXPAY_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface StoreFactory {
  name: 'sqlite' | 'postgres';
  /** A fresh, migrated, empty store; `dispose` drops it. */
  open(): Promise<{ store: Store; dispose(): Promise<void> }>;
}

/** Both dialects, so one repository suite runs against each. */
export const storeFactories: StoreFactory[] = [
  {
    name: 'sqlite',
    async open() {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-store-'));
      const store = await openStore({ dataDir });
      return { store, dispose: async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }); } };
    },
  },
  {
    name: 'postgres',
    async open() {
      // A schema of its own per suite: the same database serves parallel runs without collisions.
      const { databaseUrl, drop } = await freshPostgresSchema('vixpay_t');
      // A store that fails to open must not leave the admin connection open: the test file would never exit.
      const store = await openStore({ databaseUrl, dataDir: tmpdir() }).catch(async (error: unknown) => { await drop(); throw error; });
      return { store, dispose: async () => { await store.close(); await drop(); } };
    },
  },
];

/**
 * A new, empty schema in the test PostgreSQL: `databaseUrl` points a store or a whole platform
 * (DATABASE_URL) at it, `drop` removes it with everything in it. Runs sharing the database never see
 * each other's tables.
 */
export async function freshPostgresSchema(prefix = 'vixpay_t'): Promise<{ schema: string; databaseUrl: string; drop(): Promise<void> }> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  const url = new URL(testDatabaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    schema,
    databaseUrl: url.toString(),
    async drop() {
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}
