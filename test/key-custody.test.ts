import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { getAddress, recoverMessageAddress, type Hex } from 'viem';
import type * as Pkcs11js from 'pkcs11js';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';
import { DomainError } from '../src/shared/errors.ts';

// A platform whose relayer lanes sign in a SoftHSM2 token (KEY_CUSTODY=pkcs11): what an operator
// checks: transfers settle, the token's removal answers 503 and turns /readyz's `custody` down, and
// its return brings everything back without a restart.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let t: TestPlatform;
let alice: Wallet;
let bob: Wallet;
before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  t = await startTestPlatform({
    env: { KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile, RELAYER_LANES: '2' },
  });
  alice = (await call(t.app, '/token', 'createAddress', {})).resultData;
  bob = (await call(t.app, '/token', 'createAddress', {})).resultData;
  await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '100' });
});
after(async () => {
  await t?.stop();
  soft?.close();
});

const balance = async (address: string): Promise<string> => (await call(t.app, '/token', 'getBalance', { address })).resultData.balance;
const prepare = async (amount: string) => {
  const { data: _data, ...params } = await prepareTransfer(t.app, alice, bob.address, amount);
  return params;
};
const transfer = async (amount: string | Awaited<ReturnType<typeof prepare>>) =>
  call(t.app, '/token', 'transfer', typeof amount === 'string' ? await prepare(amount) : amount);
const readyz = async () => {
  const response = await t.app.inject({ method: 'GET', url: '/readyz' });
  return { status: response.statusCode, body: JSON.parse(response.body) };
};

/** The token leaves (its directory moved away, every session closed with it), and comes back. */
function removeToken(): () => void {
  const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
  const p11 = new lib.PKCS11();
  p11.load(soft.module);
  try { p11.C_Initialize(); } catch (error) { if ((error as Error).message !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error; }
  const [tokenDir] = readdirSync(soft.tokensDir);
  const away = path.join(soft.dir, 'away');
  renameSync(path.join(soft.tokensDir, tokenDir!), away);
  for (const slot of p11.C_GetSlotList(false)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  return () => renameSync(away, path.join(soft.tokensDir, tokenDir!));
}

test('the relayer\'s lanes are keys in the token: no relayer key file, a transfer settles signed there, /readyz has custody up', { skip }, async () => {
  assert.equal(existsSync(path.join(t.dataDir, 'relayer.key')), false);
  assert.equal(t.platform.relayer.lanes.length, 2);
  const result = await transfer('10');
  assert.equal(result.resultCode, '200', JSON.stringify(result));
  const mined = await t.platform.chains.ethereum.client.getTransaction({ hash: result.TransactionID });
  assert.ok(t.platform.relayer.lanes.includes(getAddress(mined.from)), `sent by a lane (${mined.from})`);
  assert.equal(await balance(bob.address), '10');
  const { status, body } = await readyz();
  assert.equal(status, 200);
  assert.equal(body.checks.custody.status, 'up');
});

test('with the token removed a transfer is 503 and moves nothing, /readyz says custody; back, the same request goes through without a restart', { skip }, async () => {
  const request = await prepare('5');
  const restore = removeToken();
  try {
    const refused = await transfer(request);
    assert.equal(refused.resultCode, '503', JSON.stringify(refused));
    const { status, body } = await readyz();
    assert.equal(status, 503);
    assert.equal(body.checks.custody.status, 'down');
    assert.match(body.checks.custody.error, /token "vixpay-test" is unavailable/);
  } finally {
    restore();
  }
  assert.equal(await balance(bob.address), '10');
  assert.equal((await readyz()).body.checks.custody.status, 'up');
  // Nothing was signed or sent: the refused request, temp key and all, is simply sent again.
  const result = await transfer(request);
  assert.equal(result.resultCode, '200', JSON.stringify(result));
  assert.equal((await transfer(request)).resultCode, '440', 'and only once');
  assert.equal(await balance(bob.address), '15');
  assert.equal(await balance(alice.address), '85');
});

test('a wallet\'s key is stored wrapped by the token: neither its bytes nor its hex are in the database; it signs there', { skip }, async () => {
  // Anvil's first dev account: a key whose bytes we know, imported by its mnemonic.
  const key = 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
  const imported = (await call(t.app, '/token', 'importAddress', { mnemonic: 'test test test test test test test test test test test junk' })).resultData;
  const rows = await t.platform.store.db.selectFrom('accounts').select(['address', 'private_key_enc']).execute();
  assert.ok(rows.length >= 3);
  for (const row of rows) assert.match(row.private_key_enc, /^p11:v1:vixpay-wallet-wrap-1:/, `${row.address} is wrapped by the token`);
  assert.equal(JSON.stringify(rows).includes(key), false);
  if (t.platform.store.dialect === 'sqlite') {
    for (const file of readdirSync(t.dataDir).filter((name) => /\.(db|sqlite)(-wal)?$/.test(name))) {
      const bytes = readFileSync(path.join(t.dataDir, file));
      assert.equal(bytes.includes(Buffer.from(key, 'hex')), false, `no key bytes in ${file}`);
      assert.equal(bytes.includes(Buffer.from(key)), false, `no key hex in ${file}`);
    }
  }
  // It signs (inside the token) what the token API asks of it.
  const { data, ...params } = await prepareTransfer(t.app, imported, bob.address, '1');
  assert.equal(await recoverMessageAddress({ message: data, signature: params.signature as Hex }), imported.address);
  // A DID would need the key in the DID key store, outside the token: refused, not half-done.
  await assert.rejects(t.platform.did.service.createDid({ alias: 'hsm-wallet', address: imported.address, secretKey: imported.secretKey }),
    (error: unknown) => error instanceof DomainError && error.code === 'did.key_not_held');
});
