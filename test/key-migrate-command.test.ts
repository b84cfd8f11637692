import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { bytesToHex, recoverMessageAddress } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/shared/logger.ts';
import { createKeyVault } from '../src/shared/key-vault.ts';
import { DomainError } from '../src/shared/errors.ts';
import { openStore, type Store } from '../src/store/db.ts';
import { createWalletRepository } from '../src/store/wallet-repository.ts';
import { openPkcs11Token } from '../src/chain/pkcs11-token.ts';
import { tokenWrappedKeys } from '../src/chain/token-wrapped-keys.ts';
import { walletKeys } from '../src/wallet/wallet-keys.ts';
import { keysMigrateCommand } from '../src/cli/key-commands.ts';
import { migrateKeysToToken } from '../src/compose/key-migration.ts';
import { relayerLaneKeys } from '../src/chain/platform-account.ts';
import { loadTokenLanes } from '../src/chain/token-account.ts';
import { tokenKeyVault } from '../src/chain/token-key-vault.ts';
import { cliDeps } from '../src/main.ts';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';

// `npx vixpay keys migrate --to pkcs11` through the command and the composition root, on a platform's
// SQLite data directory: killed half-way (a failpoint), run again, every wallet signs from the token.
// The run's core on both stores, rotation included: src/wallet/rewrap-wallet-keys.test.ts.
const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let dataDir: string;
let store: Store;
const masterKey = randomBytes(32);
const vault = createKeyVault(masterKey);
before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-keys-migrate-'));
  store = await openStore({ dataDir });
});
after(async () => {
  await store?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  soft?.close();
});

const relayerKey = `0x${'11'.repeat(32)}` as const;
/** The platform's own settings of file custody, with the token's beside them (what the command is run with). */
const env = (custody: Record<string, string>) => loadConfig({
  DATA_DIR: dataDir, MASTER_KEY: masterKey.toString('hex'), LOG_LEVEL: 'silent', RELAYER_PRIVATE_KEY: relayerKey, RELAYER_LANES: '2', ...custody,
});
const withToken = () => env({ PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile });
const run = async (config: ReturnType<typeof env>, values: Record<string, string | boolean>) =>
  await keysMigrateCommand.run({ config, logger: createLogger('silent'), deps: cliDeps, values, positionals: [] }) as Record<string, unknown>;

test('keys migrate --to pkcs11: killed after 3 of 8 wallets, run again: each moved once, all sign in the token, none left', { skip }, async () => {
  const repo = createWalletRepository(store.db);
  for (let i = 0; i < 8; i++) {
    const privateKey = randomBytes(32);
    await repo.insertAccount({ address: privateKeyToAddress(bytesToHex(privateKey)), privateKeyEnc: vault.encrypt(bytesToHex(privateKey)), secretKeyEnc: vault.encrypt(`s${i}`) }, 1);
  }
  // Without the token's settings, or without --to pkcs11: refused, nothing touched.
  await assert.rejects(run(env({}), { to: 'pkcs11' }), (error: unknown) => error instanceof DomainError && /PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN_FILE/.test(error.message));
  await assert.rejects(run(withToken(), {}), (error: unknown) => error instanceof DomainError && /--to pkcs11/.test(error.message));

  let replaced = 0;
  await assert.rejects(migrateKeysToToken(withToken(), {
    failpoints: { wallet: (step) => { if (step === 'replaced' && ++replaced === 3) throw new Error('failpoint: killed'); } },
  }), /killed/);
  const stored = async () => (await store.db.selectFrom('accounts').select(['address', 'private_key_enc', 'secret_key_enc']).execute());
  assert.equal((await stored()).filter((row) => row.private_key_enc.startsWith('p11:v1:')).length, 3);
  assert.equal((await stored()).filter((row) => row.secret_key_enc.startsWith('hsm:v1:')).length, 0, 'the secrets come after the wallets');

  const lanes = relayerLaneKeys(relayerKey, 2).map((key) => privateKeyToAddress(key));
  const first = await run(withToken(), { to: 'pkcs11' });
  assert.deepEqual({ ...first, next: undefined }, {
    lanes, wrappingKey: 'vixpay-wallet-wrap-1', rewrapped: 5, movedByOthers: 0, resealed: { 'wallet secret key': 8 }, remaining: 0, removed: [],
    unset: ['MASTER_KEY', 'RELAYER_PRIVATE_KEY'], next: undefined,
  });
  assert.match(String(first.next), /start the platform with KEY_CUSTODY=pkcs11 .* without MASTER_KEY and RELAYER_PRIVATE_KEY/);
  const again = await run(withToken(), { to: 'pkcs11' });
  assert.deepEqual([again.lanes, again.rewrapped, again.resealed, again.remaining], [lanes, 0, {}, 0]);
  const rotated = await run(withToken(), { to: 'pkcs11', 'rotate-wrapping-key': true });
  assert.deepEqual([rotated.wrappingKey, rotated.rewrapped, rotated.remaining], ['vixpay-wallet-wrap-2', 8, 0]);

  // Every wallet signs through the token alone, and its secret key opens there (no master key given).
  const token = openPkcs11Token(soft);
  try {
    const keys = walletKeys(createKeyVault(randomBytes(32)), tokenWrappedKeys(token));
    const secrets = tokenKeyVault(token);
    for (const [i, row] of (await stored()).entries()) {
      assert.match(row.private_key_enc, /^p11:v1:vixpay-wallet-wrap-2:/);
      const signature = await keys.account(row.private_key_enc, row.address as `0x${string}`).signMessage({ message: 'after' });
      assert.equal(await recoverMessageAddress({ message: 'after', signature }), row.address);
      assert.match(secrets.decrypt(row.secret_key_enc), /^s[0-7]$/, `secret ${i}`);
    }
    // The relayer's lanes are the file custody's accounts, now keys in the token.
    assert.deepEqual((await loadTokenLanes(token, 2)).map((lane) => lane.address), lanes);
  } finally {
    token.close();
  }
});
