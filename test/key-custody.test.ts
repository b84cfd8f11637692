import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, renameSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { getAddress } from 'viem';
import type * as Pkcs11js from 'pkcs11js';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';

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
