import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import pg from 'pg';
import { freshPostgresSchema, testDatabaseUrl } from '../../test/support/store-factories.ts';
import { openStore } from './db.ts';

// Several platforms on one PostgreSQL database, each in its own schema (CI runs, tests, tenants): each
// migrates its own schema, whatever another schema already holds.
test('two stores in two schemas of one PostgreSQL database both migrate and keep their rows apart', async () => {
  const a = await freshPostgresSchema('vixpay_db');
  const b = await freshPostgresSchema('vixpay_db');
  try {
    const first = await openStore({ databaseUrl: a.databaseUrl, dataDir: tmpdir() });
    const second = await openStore({ databaseUrl: b.databaseUrl, dataDir: tmpdir() });
    try {
      await first.db.insertInto('relayer_nonces').values({ network: 'ethereum', address: '0xA', next_nonce: 1 }).execute();
      assert.equal((await second.db.selectFrom('relayer_nonces').selectAll().execute()).length, 0);
      assert.equal((await first.db.selectFrom('relayer_nonces').selectAll().execute()).length, 1);
    } finally {
      await first.close();
      await second.close();
    }
  } finally {
    await a.drop();
    await b.drop();
  }
});

// Another tenant of the database dropping its schemas (a test run ending, an app tearing down) while
// this platform starts: opening the store looks at its own schema only, so another schema vanishing
// mid-look never fails the start ("schema … does not exist").
test('a store opens while another schema of the database is being created and dropped again and again', async () => {
  const mine = await freshPostgresSchema('vixpay_db');
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  let churning = true;
  const churn = (async () => {
    for (let i = 0; churning; i++) {
      const other = `vixpay_churn_${process.pid}_${i}`;
      await admin.query(`CREATE SCHEMA ${other}; CREATE TABLE ${other}.t (id serial primary key, a int, b text, c text, d text)`);
      await admin.query(`DROP SCHEMA ${other} CASCADE`);
    }
  })();
  try {
    for (let i = 0; i < 40; i++) {
      const store = await openStore({ databaseUrl: mine.databaseUrl, dataDir: tmpdir() });
      await store.close();
    }
  } finally {
    churning = false;
    await churn;
    await admin.end();
    await mine.drop();
  }
});

test('the store\'s introspection (what the migrator reads) lists its own schema\'s tables and columns only', async () => {
  const [a, b] = [await freshPostgresSchema('vixpay_db'), await freshPostgresSchema('vixpay_db')];
  const first = await openStore({ databaseUrl: a.databaseUrl, dataDir: tmpdir() });
  const admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE TABLE ${b.schema}.elsewhere (id int)`);
    const tables = await first.db.introspection.getTables();
    assert.ok(tables.length > 10 && tables.every((t) => t.schema === a.schema), 'its own schema\'s tables');
    assert.ok(!tables.some((t) => t.name === 'elsewhere' || t.name.startsWith('kysely_')), 'no other schema\'s, no migration tables');
    const internal = await first.db.introspection.getTables({ withInternalKyselyTables: true });
    assert.deepEqual(internal.map((t) => t.name).filter((n) => n.startsWith('kysely_')).sort(), ['kysely_migration', 'kysely_migration_lock']);
    const nonces = tables.find((t) => t.name === 'relayer_nonces');
    assert.deepEqual(nonces?.columns.find((c) => c.name === 'next_nonce'),
      { name: 'next_nonce', dataType: 'int8', dataTypeSchema: 'pg_catalog', isNullable: false, hasDefaultValue: false, isAutoIncrementing: false, comment: undefined });
  } finally {
    await admin.end();
    await first.close();
    await a.drop();
    await b.drop();
  }
});
