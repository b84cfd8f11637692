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
      const schema = `vixpay_t_${randomBytes(6).toString('hex')}`;
      const admin = new pg.Client({ connectionString: testDatabaseUrl });
      await admin.connect();
      await admin.query(`CREATE SCHEMA ${schema}`);
      const url = new URL(testDatabaseUrl);
      url.searchParams.set('options', `-c search_path=${schema}`);
      const store = await openStore({ databaseUrl: url.toString(), dataDir: tmpdir() });
      return {
        store,
        dispose: async () => {
          await store.close();
          await admin.query(`DROP SCHEMA ${schema} CASCADE`);
          await admin.end();
        },
      };
    },
  },
];
