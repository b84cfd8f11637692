import path from 'node:path';
import { createKeyVault, loadMasterKey } from '../shared/key-vault.ts';
import { systemClock } from '../shared/clock.ts';
import { openStore } from '../store/db.ts';
import { acquireLock } from '../store/advisory-lock.ts';
import { createFleetRepository } from '../store/fleet-repository.ts';
import { checkFleet, masterKeyFingerprint } from '../fleet/fleet-check.ts';
import { signingKeyFileName } from '../identity/signing-keys.ts';
import { createSigningKeyRepository } from '../identity/signing-key-repository.ts';
import { keyRefreshSeconds, openSigningKeys, retiredKeyGraceMs, rotateSigningKeys } from '../identity/signing-key-store.ts';
import type { CliCommand } from './commands.ts';
import { assertExistingPlatform } from './platform-data-dir.ts';

/**
 * `vixpay keys rotate`: a new JWT signing key for every instance of the platform (they take it up
 * within `keyRefreshSeconds`, verify it at once); the keys signing until now keep verifying, and stay
 * in `/.well-known/jwks.json`, until the tokens they signed have expired: each instance counts that
 * from the retirement with its own JWT_TTL_SECONDS, whatever this command's environment says. Needs only the database and
 * the master key (it must be the fleet's): no chain, no running server.
 */
export const keysRotateCommand: CliCommand = {
  summary: 'new JWT signing key for every instance; the old one verifies until its tokens expire',
  options: {},
  run: async ({ config }) => {
    assertExistingPlatform(config);
    const masterKey = loadMasterKey(config);
    const vault = createKeyVault(masterKey);
    const store = await openStore(config);
    try {
      const startup = await acquireLock(store, 'startup');
      try {
        await checkFleet(createFleetRepository(store.db), { master_key: masterKeyFingerprint(masterKey) }, systemClock());
        const repository = createSigningKeyRepository(store.db);
        const deps = { repository, vault, clock: systemClock, ttlSeconds: config.jwtTtlSeconds };
        // A platform upgraded but not started since: its key file is imported first, as a start would.
        (await openSigningKeys({ ...deps, importFile: path.join(config.dataDir, signingKeyFileName) })).close();
        const rotation = await rotateSigningKeys(deps);
        return {
          kid: rotation.kid,
          retired: rotation.retired,
          retiredAt: new Date(rotation.retiredAt).toISOString(),
          // Each instance keeps the retired keys for its own token lifetime: this command's
          // JWT_TTL_SECONDS is not the fleet's (signing-key-store.ts `verifiesUntil`).
          retiredVerifyFor: `JWT_TTL_SECONDS + ${retiredKeyGraceMs(0) / 1000} s of each serving instance`,
          signingWithin: `${keyRefreshSeconds} s on every running instance`,
        };
      } finally {
        await startup.release();
      }
    } finally {
      await store.close();
    }
  },
};
