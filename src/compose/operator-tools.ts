/**
 * What the CLI's commands run on, built here so that no command builds a service: the platform core
 * beside a running server (its chains attached, never restarted), or only the store and the key
 * vault for the commands that need no chain (webhook endpoints, JWT key rotation).
 */
import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import { systemClock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import { openKeyVault } from './foundation.ts';
import { openStore, type Store } from '../store/db.ts';
import { acquireLock } from '../store/advisory-lock.ts';
import { createFleetRepository } from '../store/fleet-repository.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import { createWebhookRepository } from '../store/webhook-repository.ts';
import { createOperatorRepository } from '../store/operator-repository.ts';
import { checkFleet } from '../fleet/fleet-check.ts';
import { signingKeyFileName } from '../identity/signing-keys.ts';
import { createSigningKeyRepository } from '../store/signing-key-repository.ts';
import { createPasswordHasher } from '../identity/password-hasher.ts';
import { openSigningKeys, rotateSigningKeys } from '../identity/signing-key-store.ts';
import type { WebhookEndpointDeps } from '../webhooks/webhook-endpoints.ts';
import type { OperatorDeps } from '../console/operators.ts';
import type { FacilitatorKeyDeps } from '../x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';
import { composePlatform, type Platform } from './platform.ts';

/** Runs `work` on the platform core beside a running server, found by its DATA_DIR. */
export async function withAttachedPlatform<T>(config: Config, logger: Logger, work: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await composePlatform(config, logger, { chainMode: 'attach', pairing: 'in-process' });
  try {
    return await work(platform);
  } finally {
    await platform.stop();
  }
}

/** The store's own records an operator manages without a chain: webhook endpoints and console operators. */
export interface StoreRecords {
  webhooks: WebhookEndpointDeps;
  operators: Pick<OperatorDeps, 'operators' | 'passwords' | 'clock'>;
  /** API keys of resource servers for the x402 facilitator (docs/x402.md). */
  facilitatorKeys: FacilitatorKeyDeps;
}

/** Runs `work` on the platform's store and key vault (DATA_DIR or DATABASE_URL): neither the chains nor a running server. */
export function withStoreRecords<T>(config: Config, work: (records: StoreRecords) => Promise<T>): Promise<T> {
  return withStoreAndKey(config, ({ store, vault }) => work({
    webhooks: { webhooks: createWebhookRepository(store.db, store.dialect), merchants: createMerchantRepository(store.db), vault, clock: systemClock },
    operators: { operators: createOperatorRepository(store.db), passwords: createPasswordHasher(), clock: systemClock },
    facilitatorKeys: { keys: createFacilitatorKeyRepository(store.db), clock: systemClock },
  }));
}

/** Runs `work` on the store (opened, closed after) with the custody's key vault (the master key, or the HSM token's key). */
async function withStoreAndKey<T>(config: Config, work: (opened: { store: Store; vault: KeyVault; fingerprint: () => Promise<string> }) => Promise<T>): Promise<T> {
  const { vault, custody, fingerprint } = openKeyVault(config);
  try {
    const store = await openStore(config);
    try {
      // The token's key is found (connecting) before the first seal or opening, which cannot wait for it.
      if (custody) await fingerprint();
      return await work({ store, vault, fingerprint });
    } finally {
      await store.close();
    }
  } finally {
    custody?.close();
  }
}

/**
 * A new JWT signing key for every instance of the platform, under the start-up lock, with the
 * fleet's master key (checked against the fleet's fingerprint). Needs only the database.
 */
export async function rotateFleetSigningKeys(config: Config): Promise<Awaited<ReturnType<typeof rotateSigningKeys>>> {
  return withStoreAndKey(config, async ({ store, vault, fingerprint }) => {
    const startup = await acquireLock(store, 'startup');
    try {
      await checkFleet(createFleetRepository(store.db), { master_key: await fingerprint() }, systemClock());
      const deps = { repository: createSigningKeyRepository(store.db), vault, clock: systemClock, ttlSeconds: config.jwtTtlSeconds };
      (await openSigningKeys({ ...deps, importFile: path.join(config.dataDir, signingKeyFileName) })).close();
      return await rotateSigningKeys(deps);
    } finally {
      await startup.release();
    }
  });
}
