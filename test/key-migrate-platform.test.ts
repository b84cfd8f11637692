import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getAddress, recoverMessageAddress, type Hex } from 'viem';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';
import { createLogger } from '../src/shared/logger.ts';
import { keysMigrateCommand } from '../src/cli/key-commands.ts';
import { migrateKeysToToken } from '../src/compose/key-migration.ts';
import { addWebhookEndpoint } from '../src/webhooks/webhook-endpoints.ts';
import { createWebhookRepository } from '../src/store/webhook-repository.ts';
import { createMerchantRepository } from '../src/store/merchant-repository.ts';
import { cliDeps } from '../src/main.ts';

// docs/operations.md "Moving a platform of file custody into the HSM", as an operator runs it: a
// platform that paid with file custody is stopped, `keys migrate --to pkcs11` is run (killed once
// half-way, then again), and the same platform (same DATA_DIR, database, chains) starts with
// KEY_CUSTODY=pkcs11 and pays, every key in the token and no key file left.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let dataDir: string;
before(() => {
  if (skip) return;
  soft = makeSoftToken();
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-move-into-hsm-'));
});
after(() => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  soft?.close();
});

const tokenEnv = () => ({ PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile });
const balance = async (t: TestPlatform, address: string): Promise<string> => (await call(t.app, '/token', 'getBalance', { address })).resultData.balance;
const transfer = async (t: TestPlatform, from: Wallet, to: string, amount: string) => {
  const { data: _data, ...params } = await prepareTransfer(t.app, from, to, amount);
  return call(t.app, '/token', 'transfer', params);
};
/** Every file under `dir`, relative. */
const filesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((entry) => entry.isFile()).map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)));

test('a platform that paid with file custody, moved by keys migrate --to pkcs11, pays with every key in the token and no key file left', { skip, timeout: 600_000 }, async () => {
  // 1. File custody: wallets, a payment, a JWT, a webhook secret, the relayer's two lanes.
  const before = await startTestPlatform({ dataDir, env: { RELAYER_LANES: '2' } });
  let alice: Wallet;
  let bob: Wallet;
  let lanes: string[];
  let jwt: string;
  let webhookSecret: string;
  try {
    assert.ok(existsSync(path.join(dataDir, 'master.key')) && existsSync(path.join(dataDir, 'relayer.key')), 'file custody\'s key files');
    alice = (await call(before.app, '/token', 'createAddress', {})).resultData;
    bob = (await call(before.app, '/token', 'createAddress', {})).resultData;
    await before.platform.wallet.mint('ethereum', { to: alice.address, amount: '100' });
    assert.equal((await transfer(before, alice, bob.address, '10')).resultCode, '200');
    lanes = [...before.platform.relayer.lanes];
    jwt = (await before.platform.identity.jwt.issueAccessToken('user-before')).token;
    const { db, dialect } = before.platform.store;
    webhookSecret = (await addWebhookEndpoint({ webhooks: createWebhookRepository(db, dialect), merchants: createMerchantRepository(db), vault: before.platform.vault, clock: Date.now },
      { tid: null, url: 'https://hooks.example.com/vixpay', events: [], allowPrivate: true })).secret;
  } finally {
    await before.stop({ keepData: true });
  }

  // 2. The platform stopped, its keys moved: with its own settings (file custody) and the token's.
  const migration = { ...before.config, pkcs11Module: soft.module, pkcs11TokenLabel: soft.tokenLabel, pkcs11PinFile: soft.pinFile };
  let resealed = 0;
  const killed = await migrateKeysToToken(migration, { failpoints: { secret: () => { if (++resealed === 2) throw new Error('failpoint: killed'); } } }).catch((error: unknown) => error);
  assert.match(String(killed instanceof Error ? killed.message : JSON.stringify(killed)), /killed/);
  assert.ok(existsSync(path.join(dataDir, 'master.key')), 'nothing removed by a run that did not finish');
  const moved = await keysMigrateCommand.run({ config: migration, logger: createLogger('silent'), deps: cliDeps, values: { to: 'pkcs11' }, positionals: [] }) as Record<string, unknown>;
  assert.deepEqual(moved.lanes, lanes, 'the same relayer accounts, now in the token');
  assert.equal(moved.remaining, 0);
  assert.deepEqual(moved.removed, [path.join(dataDir, 'relayer.key'), path.join(dataDir, 'master.key')]);
  assert.equal(moved.rewrapped, 0, 'the wallets moved in the killed run');
  assert.deepEqual(filesUnder(dataDir).filter((file) => /\.key$|signing-key/.test(file)), [], 'no key file left');

  // 3. The same platform with KEY_CUSTODY=pkcs11: the same lanes, balances, JWT key and webhook secret.
  const afterMove = await startTestPlatform({ dataDir, env: { KEY_CUSTODY: 'pkcs11', ...tokenEnv(), RELAYER_LANES: '2' } });
  try {
    assert.deepEqual(afterMove.platform.relayer.lanes, lanes);
    assert.equal(existsSync(path.join(dataDir, 'master.key')), false, 'no master key made');
    assert.equal(await balance(afterMove, bob.address), '10');
    const paid = await transfer(afterMove, alice, bob.address, '5');
    assert.equal(paid.resultCode, '200', JSON.stringify(paid));
    const mined = await afterMove.platform.chains.ethereum.client.getTransaction({ hash: paid.TransactionID });
    assert.ok(lanes.includes(getAddress(mined.from)), 'sent by a lane signing in the token');
    assert.equal(await balance(afterMove, bob.address), '15');
    assert.equal(await balance(afterMove, alice.address), '85');
    // Lane 0 still owns the contracts: it mints.
    await afterMove.platform.wallet.mint('ethereum', { to: bob.address, amount: '1' });
    assert.equal(await balance(afterMove, bob.address), '16');
    // A wallet made before signs in the token; a JWT issued before verifies; the webhook secret opens.
    const { data, signature } = await prepareTransfer(afterMove.app, bob, alice.address, '1');
    assert.equal(await recoverMessageAddress({ message: data, signature: signature as Hex }), bob.address);
    assert.deepEqual(await afterMove.platform.identity.jwt.verifyAccessToken(jwt), { userId: 'user-before' });
    const { db } = afterMove.platform.store;
    const endpoint = await db.selectFrom('webhook_endpoints').select('secret_enc').executeTakeFirstOrThrow();
    assert.equal(afterMove.platform.vault.decrypt(endpoint.secret_enc), webhookSecret);
    // Every stored key and secret is the token's.
    for (const row of await db.selectFrom('accounts').select(['private_key_enc', 'secret_key_enc']).execute()) {
      assert.match(row.private_key_enc, /^p11:v1:/);
      assert.match(row.secret_key_enc, /^hsm:v1:/);
    }
    for (const row of await db.selectFrom('jwt_signing_keys').select('private_jwk_enc').execute()) assert.match(row.private_jwk_enc, /^hsm:v1:/);
    for (const row of await db.selectFrom('did_private_keys').select('private_key_enc').execute()) assert.match(row.private_key_enc, /^hsm:v1:/);
    // The system DIDs' keys open in the token: a credential issued now verifies.
    const { service, systemDids } = afterMove.platform.did;
    const vc = await service.createCredential({ holder: `did:ethr:${getAddress(alice.address)}`, issuer: systemDids.issuer[0]!.did, userInfo: { name: 'Moved' }, callerWalletAddress: alice.address });
    assert.equal((await service.verifyCredential(vc)).verified, true);
  } finally {
    await afterMove.stop();
  }
});
