import path from 'node:path';
import { freshPostgresSchema, type FreshSchema } from './store-factories.ts';

export { freshPostgresSchema, storeFactories, testDatabaseUrl, type FreshSchema, type StoreFactory } from './store-factories.ts';

/**
 * The store test platforms and server processes run on: VIXPAY_TEST_STORE=sqlite (default) or
 * postgres (a fresh schema per platform in the test PostgreSQL; `npm run test:matrix`).
 */
export function testStore(env: NodeJS.ProcessEnv = process.env): 'sqlite' | 'postgres' {
  const value = env.VIXPAY_TEST_STORE || 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') throw new Error(`VIXPAY_TEST_STORE=${value}: expected sqlite or postgres`);
  return value;
}

const byDataDir = new Map<string, Promise<FreshSchema>>();

/**
 * The PostgreSQL schema of the platform in `dataDir` under VIXPAY_TEST_STORE=postgres, made on first
 * use: a platform or server started again on the same data directory finds its data, as it would in
 * the directory's SQLite file. `releaseDataDirSchema` (or the end of the test file) drops it.
 */
export function dataDirSchema(dataDir: string): Promise<FreshSchema> {
  const key = path.resolve(dataDir);
  let schema = byDataDir.get(key);
  if (!schema) {
    schema = freshPostgresSchema('vixpay_dir');
    byDataDir.set(key, schema);
    schema.catch(() => byDataDir.delete(key));
  }
  return schema;
}

export async function releaseDataDirSchema(dataDir: string): Promise<void> {
  const key = path.resolve(dataDir);
  const schema = byDataDir.get(key);
  byDataDir.delete(key);
  if (schema) await (await schema).drop();
}

/**
 * The environment that puts a platform, server process or CLI run on `dataDir` onto the test store:
 * `{}` on SQLite (the data directory's file), `{ DATABASE_URL }` of the directory's schema on PostgreSQL.
 */
export async function testStoreEnv(dataDir: string): Promise<{ DATABASE_URL?: string }> {
  return testStore() === 'postgres' ? { DATABASE_URL: (await dataDirSchema(dataDir)).databaseUrl } : {};
}
