import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { addUser } from '../src/identity/add-user.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { testDatabaseUrl } from './support/store-factories.ts';

// The whole platform on PostgreSQL (DATABASE_URL), as scaled out: migrations, wallet, relayer
// journal, identity and DIDs all on the one database, in a schema of this test's own.
const schema = `vixpay_p_${randomBytes(6).toString('hex')}`;
const admin = new pg.Client({ connectionString: testDatabaseUrl });
let t: TestPlatform;

before(async () => {
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const url = new URL(testDatabaseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  t = await startTestPlatform({ env: { DATABASE_URL: url.toString() } });
});
after(async () => {
  await t?.stop();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

test('on PostgreSQL: a user, a login and a signed transfer, journaled in PostgreSQL', async () => {
  assert.equal(t.platform.store.dialect, 'postgres');
  const alice = await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id: 'alice', password: 'alice password', name: 'Alice' });
  const login = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'alice', password: 'alice password' } });
  assert.equal(login.statusCode, 200);
  await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '10' });
  const bob = (await call(t.app, '/token', 'createAddress', {})).resultData;
  const { data: _d, ...params } = await prepareTransfer(t.app, alice, bob.address, '2.5');
  const result = await call(t.app, '/token', 'transfer', params);
  assert.equal(result.resultCode, '200');
  const journal = await admin.query(`SELECT status, kind FROM ${schema}.chain_txs WHERE tx_hash = $1`, [result.TransactionID]);
  assert.deepEqual(journal.rows, [{ status: 'confirmed', kind: 'settlement' }]);
  assert.equal((await call(t.app, '/token', 'getBalance', { address: bob.address })).resultData.balance, '2.5');
  const issuers = await t.app.inject({ method: 'GET', url: '/v2/did/issuers' });
  assert.equal(issuers.json().length, 1);
});
