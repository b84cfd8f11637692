import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { openStore, type Store } from '../../src/store/db.ts';

// Stores a test opens by name (both dialects, a fresh schema): the same whatever the test switches say.
// What follows the switch (the store test platforms run on) is in stores.ts; keeping it apart lets
// the matrix tell the tests it can change from those it cannot (scripts/test-selection.ts).

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
export async function freshPostgresSchema(prefix = 'vixpay_t'): Promise<FreshSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
  } catch (error) {
    await admin.end();
    throw error;
  }
  undropped.add(schema);
  const url = new URL(testDatabaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  // Its connections carry the schema's name, so a test looking at pg_stat_activity sees its own
  // connections only, not those of a test file running beside it on the same database.
  url.searchParams.set('application_name', schema);
  let dropped: Promise<void> | undefined;
  return {
    schema,
    databaseUrl: url.toString(),
    drop() {
      dropped ??= (async () => {
        try {
          await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
          undropped.delete(schema);
        } finally {
          await admin.end();
        }
      })();
      return dropped;
    },
  };
}

export interface FreshSchema { schema: string; databaseUrl: string; drop(): Promise<void> }

/**
 * Schemas made and not dropped yet (a platform kept for a restart, a server process a test started on
 * a data directory): dropped when the test file's process exits, in a short child process since
 * nothing asynchronous runs in an exit handler.
 */
const undropped = new Set<string>();
process.once('exit', () => {
  if (undropped.size === 0) return;
  const script = `import pg from 'pg';
const [url, ...schemas] = process.argv.slice(1);
const admin = new pg.Client({ connectionString: url });
await admin.connect();
await admin.query("SET lock_timeout = '5s'");
for (const schema of schemas) await admin.query('DROP SCHEMA IF EXISTS ' + schema + ' CASCADE').catch((e) => console.error(schema, e.message));
await admin.end();`;
  spawnSync(process.execPath, ['--input-type=module', '-e', script, testDatabaseUrl, ...undropped], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)), stdio: ['ignore', 'ignore', 'inherit'], timeout: 30_000,
  });
});

