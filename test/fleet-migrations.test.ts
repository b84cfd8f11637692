import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { sql } from 'kysely';
import { openStore } from '../src/store/db.ts';
import { migrations } from '../src/store/migrations/index.ts';
import { freshPostgresSchema } from './support/store-factories.ts';

// Instances cold-starting at once on an empty schema: each opens its store (and migrates) at the
// same moment; every one must come up, and every migration must have run exactly once.
test('three stores migrating one empty PostgreSQL schema at once all succeed, each migration applied once', async () => {
  const { databaseUrl, drop } = await freshPostgresSchema('vixpay_fm');
  const opened = await Promise.allSettled([0, 1, 2].map(() => openStore({ databaseUrl, dataDir: tmpdir() })));
  try {
    const failures = opened.flatMap((r) => (r.status === 'rejected' ? [String((r.reason as Error).cause ?? r.reason)] : []));
    assert.deepEqual(failures, []);
    const [first] = opened.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    const applied = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(first!.db);
    assert.deepEqual(applied.rows.map((r) => r.name), Object.keys(migrations).sort());
  } finally {
    for (const r of opened) if (r.status === 'fulfilled') await r.value.close();
    await drop();
  }
});
