/**
 * `vixpay keys migrate --to pkcs11`: a platform of file custody moved into the HSM token, every key
 * of it: the relayer's lanes (the treasury and the contracts' owner: the same accounts, now token
 * objects), the wallets' keys (wrapped by the token), and every secret the master key sealed (sealed
 * anew by the token's key-encryption key); then the fleet's master-key fingerprint is the token's and
 * the key files are removed. Each step is checked (a signature recovering to the lane's or wallet's
 * address, a secret opened in the token to the same text) before it replaces anything, and the stored
 * forms are the progress: a run stopped anywhere is taken up by running it again.
 */
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../config/config.ts';
import { systemClock } from '#shared/clock.ts';
import { DomainError } from '#shared/errors.ts';
import { createKeyVault, loadMasterKey } from '#shared/key-vault.ts';
import { openStore } from '../store/db.ts';
import { acquireLock } from '../store/advisory-lock.ts';
import { createFleetRepository } from '../store/fleet-repository.ts';
import { createAccountKeyRepository } from '../store/wallet-repository.ts';
import { createSealedSecretsRepository } from '../store/sealed-secrets-repository.ts';
import { FleetMismatchError, masterKeyFingerprint, relayerAccountFingerprint } from '../fleet/fleet-check.ts';
import { openPkcs11Token } from '../chain/pkcs11-token.ts';
import { tokenKeyVault, tokenSealedPrefix } from '../chain/token-key-vault.ts';
import { tokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import { importTokenLanes } from '../chain/token-account.ts';
import { existingPlatformKey, relayerLaneKeys } from '../chain/platform-account.ts';
import { rewrapWalletKeys, type RewrapDeps } from '../wallet/rewrap-wallet-keys.ts';
import { resealSecrets, type ResealDeps } from '../wallet/reseal-secrets.ts';
import type { KeyMigrationResult } from '../wallet/key-migration-result.ts';
import type { Address } from 'viem';
import { tokenOptions } from './foundation.ts';


/** Test switches: a throw stops the run there, as a crash would. */
export interface KeyMigrationFailpoints {
  wallet?: RewrapDeps['failpoint'];
  secret?: ResealDeps['failpoint'];
}

export async function migrateKeysToToken(
  config: Config, options: { rotate?: boolean; failpoints?: KeyMigrationFailpoints } = {},
): Promise<KeyMigrationResult> {
  if (!config.pkcs11Module || !config.pkcs11TokenLabel || !config.pkcs11PinFile) {
    throw new DomainError('request.invalid', 'keys migrate --to pkcs11 needs the token\'s PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN_FILE (beside the platform\'s own settings)');
  }
  const masterKeyFile = path.join(config.dataDir, 'master.key');
  // The master key of file custody, where there still is one (never made here).
  const masterKey = config.masterKey || existsSync(masterKeyFile) ? loadMasterKey(config) : undefined;
  const fileVault = masterKey && createKeyVault(masterKey);
  const token = openPkcs11Token(tokenOptions(config));
  const tokenVault = tokenKeyVault(token);
  const store = await openStore(config);
  try {
    const fleet = createFleetRepository(store.db);
    const startup = await acquireLock(store, 'startup');
    try {
      // The key-encryption key is made (first run) under the start-up lock, as a platform's first start would.
      await tokenVault.ready();
      const stored = (await fleet.all()).get('master_key');
      const ours = [...(masterKey ? [masterKeyFingerprint(masterKey)] : []), await tokenVault.fingerprint()];
      if (stored !== undefined && !ours.includes(stored)) throw new FleetMismatchError(['master_key']);
    } finally {
      await startup.release();
    }

    let lanes: Address[] = [];
    const platformKey = fileVault && existingPlatformKey({ privateKey: config.relayerPrivateKey, dataDir: config.dataDir, vault: fileVault });
    if (platformKey) {
      lanes = await importTokenLanes(token, relayerLaneKeys(platformKey, config.relayerLanes)).catch((error: unknown) => {
        if (error instanceof DomainError) throw error;
        throw new DomainError('request.invalid', `the relayer's lanes did not move into the token: ${(error as Error).message}`, { cause: error });
      });
      const account = (await fleet.all()).get('relayer_account');
      if (account !== undefined && account !== relayerAccountFingerprint(lanes[0]!)) throw new FleetMismatchError(['relayer_account']);
    }

    // Each wallet signs once (its check): none is kept unwrapped for a next signature.
    const wallets = await rewrapWalletKeys({
      accounts: createAccountKeyRepository(store.db), vault: fileVault ?? tokenVault, token: tokenWrappedKeys(token, { unwrappedKeys: 0 }),
      failpoint: options.failpoints?.wallet,
    }, { rotate: options.rotate === true });
    const sealed = createSealedSecretsRepository(store.db);
    const secrets = fileVault
      ? await resealSecrets({ secrets: sealed, from: fileVault, to: tokenVault, settled: tokenSealedPrefix, failpoint: options.failpoints?.secret })
      : { resealed: {}, failed: [], remaining: await sealed.countNotIn(tokenSealedPrefix) };

    const complete = wallets.failed.length === 0 && wallets.remaining === 0 && secrets.failed.length === 0 && secrets.remaining === 0;
    const removed: string[] = [];
    if (complete) {
      // From here a file-custody instance on this database refuses to start (the fleet's key is the token's).
      await fleet.set('master_key', await tokenVault.fingerprint(), systemClock());
      for (const file of ['relayer.key', 'master.key']) {
        const where = path.join(config.dataDir, file);
        if (file === 'relayer.key' && !platformKey) continue;
        if (!existsSync(where)) continue;
        rmSync(where);
        removed.push(where);
      }
    }
    const unset = [...(config.masterKey ? ['MASTER_KEY'] : []), ...(config.relayerPrivateKey ? ['RELAYER_PRIVATE_KEY'] : [])];
    return { lanes, wallets, secrets, removed, unset, complete };
  } finally {
    await store.close();
    token.close();
  }
}
