import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { sql } from 'kysely';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { writeHeapSnapshot } from 'node:v8';
import { bytesToHex, getAddress, recoverMessageAddress, type Hex } from 'viem';
import { mnemonicToAccount, privateKeyToAddress } from 'viem/accounts';
import type * as Pkcs11js from 'pkcs11js';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';
import { heapSnapshotStrings } from './support/heap-snapshot.ts';
import { DomainError } from '../src/shared/errors.ts';
import { createLogger } from '../src/shared/logger.ts';
import { createKeyVault } from '../src/shared/key-vault.ts';
import { createAccountKeyRepository, createWalletRepository } from '../src/store/wallet-repository.ts';
import { tokenWrappedKeys } from '../src/chain/token-wrapped-keys.ts';
import { rewrapWalletKeys } from '../src/wallet/rewrap-wallet-keys.ts';
import { addWebhookEndpoint } from '../src/webhooks/webhook-endpoints.ts';
import { createWebhookRepository } from '../src/store/webhook-repository.ts';
import { createMerchantRepository } from '../src/store/merchant-repository.ts';

// A platform whose relayer lanes sign in a SoftHSM2 token (KEY_CUSTODY=pkcs11): what an operator
// checks: transfers settle, the token's removal answers 503 and turns /readyz's `custody` down, and
// its return brings everything back without a restart.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let t: TestPlatform;
let alice: Wallet;
let bob: Wallet;
/** Everything the platform logged, at debug level (searched for keys). */
const logs: Buffer[] = [];
before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  const logStream = new PassThrough();
  logStream.on('data', (chunk: Buffer) => logs.push(chunk));
  t = await startTestPlatform({
    env: { KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile, RELAYER_LANES: '2' },
    logger: createLogger('debug', logStream),
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

test('every secret is sealed by a key in the token: no master.key; JWT signing keys, system DIDs\' keys, secret keys and webhook secrets open there alone', { skip }, async () => {
  assert.equal(existsSync(path.join(t.dataDir, 'master.key')), false, 'no master key file');
  const { db, dialect } = t.platform.store;
  const webhooks = { webhooks: createWebhookRepository(db, dialect), merchants: createMerchantRepository(db), vault: t.platform.vault, clock: Date.now };
  const { secret } = await addWebhookEndpoint(webhooks, { tid: null, url: 'https://hooks.example.com/vixpay', events: [], allowPrivate: true });
  const sealed = {
    'JWT signing keys': (await db.selectFrom('jwt_signing_keys').select('private_jwk_enc as sealed').execute()).map((row) => row.sealed),
    'DID keys (system issuer and verifier)': (await db.selectFrom('did_private_keys').select('private_key_enc as sealed').execute()).map((row) => row.sealed),
    'wallets\' secret keys': (await db.selectFrom('accounts').select('secret_key_enc as sealed').execute()).map((row) => row.sealed),
    'webhook secrets': (await db.selectFrom('webhook_endpoints').select('secret_enc as sealed').execute()).map((row) => row.sealed),
  };
  for (const [what, forms] of Object.entries(sealed)) {
    assert.ok(forms.length > 0, `${what}: some stored`);
    for (const form of forms) assert.match(form, /^hsm:v1:vixpay-secrets-kek-1:/, `${what} sealed by the token's key`);
  }
  assert.equal(t.platform.vault.decrypt(sealed['webhook secrets'][0]!), secret);
  assert.equal(t.platform.vault.decrypt(sealed['wallets\' secret keys'][0]!).length > 0, true);
  // The JWT signing key, opened in the token at start, signs access tokens that verify.
  const { jwt } = t.platform.identity;
  const { token } = await jwt.issueAccessToken('user-hsm');
  assert.deepEqual(await jwt.verifyAccessToken(token), { userId: 'user-hsm' });
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
  // Anvil's first dev account: a key whose bytes we know, imported by its mnemonic (derived here, not
  // written in this file: the heap snapshot below would find this file's source text).
  const imported = (await call(t.app, '/token', 'importAddress', { mnemonic: anvilMnemonic })).resultData;
  const key = keyOf(anvilMnemonic).toString('hex');
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
  // A DID over it: Veramo keeps its public key only, under the pkcs11 KMS, and what it signs is signed in the token.
  const { service, systemDids } = t.platform.did;
  const record = await service.createDid({ alias: 'hsm-wallet', address: imported.address, secretKey: imported.secretKey });
  assert.equal(record.did, `did:ethr:${getAddress(imported.address)}`);
  assert.deepEqual(record.keys.map((key) => [key.kms, key.publicKeyHex]), [['pkcs11', mnemonicToAccount(anvilMnemonic).publicKey.slice(2)]]);
  const vc = await service.createCredential({ holder: record.did, issuer: systemDids.issuer[0]!.did, userInfo: { name: 'Hsm' }, callerWalletAddress: imported.address });
  const vp = await service.createPresentation({ holder: record.did, verifier: systemDids.verifier[0]!.did, credentials: [vc] });
  const checked = await service.verifyPresentation(vp);
  assert.equal(checked.verified, true, JSON.stringify(checked));
  assert.equal((vp as { holder?: string }).holder, record.did);
  // A presentation changed after it was signed does not verify: the signature is the token's, over what was signed.
  const jwt = (vp as { proof: { jwt: string } }).proof.jwt;
  const [header, payload, signature] = jwt.split('.');
  const forged = `${header}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), nbf: 1 })).toString('base64url')}.${signature}`;
  assert.equal((await service.verifyPresentation({ ...vp, proof: { type: 'JwtProof2020', jwt: forged } })).verified, false);
  // With the token removed, the holder's presentation is custody.unavailable; it signs again once back.
  const restore = removeToken();
  try {
    await assert.rejects(service.createPresentation({ holder: record.did, verifier: systemDids.verifier[0]!.did, credentials: [vc] }),
      (error: unknown) => error instanceof DomainError && error.code === 'custody.unavailable');
  } finally {
    restore();
  }
  assert.equal((await service.verifyPresentation(await service.createPresentation({ holder: record.did, verifier: systemDids.verifier[0]!.did, credentials: [vc] }))).verified, true);
});

const anvilMnemonic = 'test test test test test test test test test test test junk';
/** The key at m/44'/60'/0'/0/0 of a mnemonic, as bytes (what createAddress and importAddress derive). */
const keyOf = (mnemonic: string) => Buffer.from(mnemonicToAccount(mnemonic).getHdKey().privateKey!);

/** The forms a key's bytes take in text: hex (either case), base64, and the bytes themselves as a one-byte string. */
const textForms = (key: Buffer): string[] => [key.toString('hex'), key.toString('hex').toUpperCase(), key.toString('base64'), key.toString('latin1')];

test('no wallet key in the heap of the running platform, its logs or its database: created, imported, and moved from file custody, each having signed', { skip }, async () => {
  // Two wallets of file custody (sealed with the master key, as before the switch), moved into the
  // token as `keys migrate --to pkcs11` does; the key bytes are kept as buffers, never as strings (a heap
  // snapshot holds strings' text, not buffers' contents). The other wallets' keys are derived from their mnemonics.
  const repo = createWalletRepository(t.platform.store.db);
  const moved: Array<{ wallet: Wallet; key: Buffer }> = [];
  const fileCustody = createKeyVault(randomBytes(32));
  for (let i = 0; i < 2; i++) {
    const key = randomBytes(32);
    const wallet = { address: privateKeyToAddress(bytesToHex(key)), secretKey: randomBytes(32).toString('hex') };
    assert.ok(await repo.insertAccount({ address: wallet.address, privateKeyEnc: fileCustody.encrypt(bytesToHex(key)), secretKeyEnc: t.platform.vault.encrypt(wallet.secretKey) }, Date.now()));
    moved.push({ wallet, key });
  }
  const migration = await rewrapWalletKeys({ accounts: createAccountKeyRepository(t.platform.store.db), vault: fileCustody, token: tokenWrappedKeys(t.platform.custody!) });
  assert.equal(migration.rewrapped, 2);
  assert.equal(migration.remaining, 0);
  // Each wallet signs (in the token) before the snapshot; alice also sent a transfer, settled by the relayer's lanes.
  for (const { wallet } of moved) {
    const { data, signature } = await prepareTransfer(t.app, wallet, bob.address, '1');
    assert.equal(await recoverMessageAddress({ message: data, signature: signature as Hex }), wallet.address);
  }
  const imported = { address: privateKeyToAddress(bytesToHex(keyOf(anvilMnemonic))) };
  const keys: Array<{ name: string; key: Buffer }> = [
    { name: 'alice (created)', key: keyOf(alice.mnemonic!) }, { name: 'bob (created)', key: keyOf(bob.mnemonic!) },
    { name: `${imported.address} (imported)`, key: keyOf(anvilMnemonic) },
    ...moved.map(({ wallet, key }) => ({ name: `${wallet.address} (moved from file custody)`, key })),
  ];

  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-heap-'));
  try {
    // A full collection comes first: what the snapshot holds is what the process still keeps.
    const snapshot = heapSnapshotStrings(writeHeapSnapshot(path.join(dir, 'platform.heapsnapshot'))).join('\n');
    // The search sees strings a process keeps: the moved wallets' secret keys, held by this test as hex strings, are found.
    assert.ok(moved.every(({ wallet }) => snapshot.includes(wallet.secretKey)), 'the snapshot holds the strings the process keeps');
    const logText = Buffer.concat(logs).toString('latin1');
    assert.ok(logText.includes('platform ready'), 'the logs were captured');
    const database = await databaseText();
    assert.ok(moved.every(({ wallet }) => database.includes(wallet.address)), 'the database text holds the accounts');
    for (const { name, key } of keys) {
      for (const form of textForms(key)) {
        assert.equal(snapshot.includes(form), false, `${name}'s key (as ${JSON.stringify(form.slice(0, 12))}...) is in the platform's heap`);
        assert.equal(logText.includes(form), false, `${name}'s key is in the logs`);
        assert.equal(database.includes(form), false, `${name}'s key is in the database`);
      }
      assert.equal(Buffer.concat(logs).includes(key), false, `${name}'s key bytes are in the logs`);
      assert.equal(database.includes(key.toString('latin1')), false, `${name}'s key bytes are in the database`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Every wallet's stored key is wrapped by the token (none sealed with the master key, none in the clear).
  for (const row of await t.platform.store.db.selectFrom('accounts').select(['address', 'private_key_enc']).execute()) {
    assert.match(row.private_key_enc, /^p11:v1:vixpay-wallet-wrap-1:/, row.address);
  }
});

/** The whole database as text: SQLite's files (raw bytes as latin1), or every PostgreSQL row as JSON. */
async function databaseText(): Promise<string> {
  const { store } = t.platform;
  if (store.dialect === 'sqlite') {
    return readdirSync(t.dataDir).filter((name) => /\.(db|sqlite)(-wal|-shm)?$/.test(name))
      .map((file) => readFileSync(path.join(t.dataDir, file)).toString('latin1')).join('\n');
  }
  const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(store.db);
  const texts: string[] = [];
  for (const { table_name: table } of tables.rows) {
    const rows = await sql<{ row: string }>`select row_to_json(t)::text as row from ${sql.table(table)} t`.execute(store.db);
    texts.push(...rows.rows.map((row) => row.row));
  }
  return texts.join('\n');
}
