import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { freshPostgresSchema } from '../../test/support/store-factories.ts';
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
