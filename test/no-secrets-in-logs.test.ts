import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { createLogger } from '../src/shared/logger.ts';
import { addUser } from '../src/identity/add-user.ts';
import { call, rpc, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';

// Everything the platform logs at the most verbose level, while secrets pass through every API.
let logs = '';
const sink = new Writable({ write(chunk, _encoding, done) { logs += chunk.toString(); done(); } });
let t: TestPlatform;
before(async () => { t = await startTestPlatform({ logger: createLogger('trace', sink) }); });
after(async () => { await t?.stop(); });

test('no secret reaches a log line, even at trace level and on errors', async () => {
  const secrets: string[] = [];
  const alice = await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id: 'alice', password: 'alice password 123', name: 'Alice' });
  secrets.push(alice.secretKey, alice.mnemonic, 'alice password 123');
  const bob = (await call(t.app, '/token', 'createAddress', {})).resultData;
  secrets.push(bob.secretKey, bob.mnemonic);
  await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '5' });
  const { data: _d, ...transfer } = await prepareTransfer(t.app, alice, bob.address, '1');
  secrets.push(transfer.tempKey, transfer.hashKey);
  assert.equal((await call(t.app, '/token', 'transfer', transfer)).resultCode, '200');
  assert.equal((await call(t.app, '/token', 'transfer', transfer)).resultCode, '440');
  const login = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'alice', password: 'alice password 123' } });
  const token = login.json().token as string;
  secrets.push(token);
  await t.app.inject({ method: 'POST', url: '/v1/ict/pay', headers: { authorization: `Bearer ${token}` },
    payload: { tokenName: 'VIXP', amount: '1', myAddress: alice.address, password: 'alice password 123' } });
  await t.app.inject({ method: 'POST', url: '/v1/ict/pay', headers: { authorization: `Bearer ${token}` },
    payload: { tokenName: 'VIXP', amount: '999', myAddress: alice.address, password: 'alice password 123' } });
  await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'alice', password: 'wrong but secret 42' } });
  secrets.push('wrong but secret 42');
  await rpc(t.app, '/token', { jsonrpc: '2.0', id: 1, method: 'importAddress', params: { mnemonic: bob.mnemonic } });
  await t.app.inject({ method: 'POST', url: '/v2/did/create-did', payload: { alias: 'a', address: alice.address, secretKey: alice.secretKey } });

  assert.ok(logs.length > 1000, 'the platform did log');
  for (const secret of secrets) assert.ok(!logs.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the logs`);
  const privateKeys = await t.platform.store.db.selectFrom('accounts').select('private_key_enc').execute();
  for (const row of privateKeys) {
    const key = t.platform.vault.decrypt(row.private_key_enc);
    assert.ok(!logs.includes(key.slice(2)), 'a private key is in the logs');
  }
});

// item 7 of issue 19: a JWT sent as `?access_token=` was refused, and written verbatim to the request log.
test('tokens and API keys in a query string never reach a log line: the request log shows them redacted', async () => {
  const login = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: 'alice', password: 'alice password 123' } });
  const token = login.json().token as string;
  assert.ok(token, 'logged in');
  const secrets = { access_token: token, token: `${token}x`, id_token: 'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.sig-of-id', api_key: 'sk_live_query_api_key_42', apiKey: 'query-api-key-camel-17', API_KEY: 'upper-api-key-99', accessToken: 'camel-access-token-5', client_secret: 'client-secret-value-8' };
  const query = new URLSearchParams(secrets).toString();
  const before = logs.length;
  for (const url of [`/v2/auth/refresh-token?${query}`, `/token?${query}&keep=visible`, `/no/such/route?${query}`, `/v1/ict/pay?${query}`]) {
    await t.app.inject({ method: 'GET', url });
    await t.app.inject({ method: 'POST', url, payload: { jsonrpc: '2.0', id: 1, method: 'nope' } });
  }
  const written = logs.slice(before);
  assert.match(written, /access_token=\[redacted\]/, 'the request log still shows the parameter, redacted');
  assert.match(written, /keep=visible/, 'other parameters stay');
  for (const [name, value] of Object.entries(secrets)) assert.ok(!written.includes(value), `?${name}= is in the logs`);
});
