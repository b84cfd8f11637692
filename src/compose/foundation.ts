/**
 * The ground every other part stands on: DATA_DIR made private, the key vault (the master key, or the
 * HSM token's key-encryption key with KEY_CUSTODY=pkcs11), the relational store (opened and
 * migrated), the fleet membership and the start-up lock.
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import { preparePrivateDataDir } from '#shared/private-data-dir.ts';
import { createKeyVault, loadMasterKey, type KeyVault } from '#shared/key-vault.ts';
import { hostOf, probeRedis } from '#shared/dependency-probe.ts';
import { describeFailure } from '#shared/failure-summary.ts';
import { openStore, type Store } from '../store/db.ts';
import { acquireLock, tryLock, type HeldLock } from '../store/advisory-lock.ts';
import { createFleetRepository, type FleetRepository } from '../store/fleet-repository.ts';
import { checkFleet, claimFleetId, masterKeyFingerprint } from '../fleet/fleet-check.ts';
import { joinFleet } from '../fleet/instance-membership.ts';
import { openPkcs11Token, type Pkcs11Token, type TokenOptions } from '../chain/pkcs11-token.ts';
import { tokenKeyVault } from '../chain/token-key-vault.ts';

/** What the foundation holds; `cleanups` gets what must run at stop (in reverse). */
export interface Foundation {
  vault: KeyVault;
  /** The HSM token (`KEY_CUSTODY=pkcs11`): the vault's key, the relayer's lanes and the wallets' wrapping keys are in it. */
  custody?: Pkcs11Token | undefined;
  store: Store;
  fleet: FleetRepository;
  /** The fleet's id: the prefix of its Redis keys. */
  fleetId: string;
  /** Held while this instance sets the platform up (released by the assembler once it has). */
  startup: HeldLock;
}

/**
 * Opens the store before anything else: a dependency named in the configuration that does not
 * answer stops the start with one line naming its setting, never an instance left half-started.
 */
export async function openStoreOrExplain(config: Config, logger: Logger): Promise<Store> {
  return openStore({
    ...config,
    onConnectionError: (err) => logger.warn({ err }, 'a PostgreSQL connection was lost; a new one is opened when next needed'),
  }).catch((error: unknown) => {
    const where = config.databaseUrl ? `PostgreSQL (DATABASE_URL, ${hostOf(config.databaseUrl)})` : `SQLite (DATA_DIR, ${config.dataDir})`;
    throw new Error(`${where} cannot be opened: ${describeFailure(error)}`, { cause: error });
  });
}

/**
 * Many instances on one PostgreSQL (docs/operations.md "Production topology"): a server instance is
 * a member of the fleet while it runs (with IPFS blocks in DATA_DIR only alone); one instance at a time sets
 * the platform up (first start: contracts, nonces, JWT keys, system DIDs), so cold starts never race;
 * every instance must share the fleet's master key and relayer (fingerprints, fleet table).
 */
export async function openFoundation(
  config: Config, logger: Logger, clock: Clock, options: { server: boolean; redis: boolean },
  cleanups: Array<() => Promise<void>>,
): Promise<Foundation> {
  // Before the first file is written: DATA_DIR 0700, everything in it 0600 (keys, SQLite, chain state, IPFS).
  preparePrivateDataDir(config.dataDir);
  const keys = openKeyVault(config);
  const { vault, custody } = keys;
  if (custody) cleanups.push(async () => custody.close());
  const store = await openStoreOrExplain(config, logger);
  if (options.redis && config.redisUrl) {
    await probeRedis(config.redisUrl).catch(async (error: unknown) => { await store.close().catch(() => undefined); throw error; });
  }
  cleanups.push(() => store.close());
  if (options.server) {
    cleanups.push((await joinFleet(store, config.ipfsApiUrl || config.ipfsBlockstore === 'postgres' ? 'shared' : 'embedded', {
      onLost: (err) => logger.warn({ err }, 'fleet membership lost with its database connection; joining again'),
      onRejoined: () => logger.info('fleet membership held again'),
    })).release);
  }
  let startup = await tryLock(store, 'startup', 'exclusive');
  if (!startup) {
    logger.info('another instance is setting the platform up on this database; waiting for it to finish');
    startup = await acquireLock(store, 'startup');
  }
  const held = startup;
  cleanups.push(() => held.release());
  const fleet = createFleetRepository(store.db);
  await checkFleet(fleet, { master_key: await keys.fingerprint() }, clock());
  const fleetId = await claimFleetId(fleet, clock());
  return { vault, custody, store, fleet, fleetId, startup: held };
}

/** The key vault of the configured custody, its fleet fingerprint, and the token with pkcs11. */
export interface OpenedKeyVault {
  vault: KeyVault;
  custody?: Pkcs11Token | undefined;
  /** The fleet's `master_key` fingerprint; with pkcs11 it makes the key-encryption key in the token at first (under the start-up lock). */
  fingerprint(): Promise<string>;
}

/**
 * File custody: the master key (MASTER_KEY, or `DATA_DIR/master.key`, made once). pkcs11: a key
 * generated in the token and used there; no master key is read or made.
 */
export function openKeyVault(config: Config): OpenedKeyVault {
  if (config.keyCustody === 'pkcs11') {
    const custody = openPkcs11Token(tokenOptions(config));
    const vault = tokenKeyVault(custody);
    return { vault, custody, fingerprint: () => vault.fingerprint() };
  }
  const masterKey = loadMasterKey(config);
  return { vault: createKeyVault(masterKey), fingerprint: async () => masterKeyFingerprint(masterKey) };
}

/** The token's settings, which config.ts requires together with KEY_CUSTODY=pkcs11. */
export function tokenOptions(config: Pick<Config, 'pkcs11Module' | 'pkcs11TokenLabel' | 'pkcs11PinFile'>): TokenOptions {
  const { pkcs11Module: module, pkcs11TokenLabel: tokenLabel, pkcs11PinFile: pinFile } = config;
  if (!module || !tokenLabel || !pinFile) throw new Error('KEY_CUSTODY=pkcs11 needs PKCS11_MODULE, PKCS11_TOKEN_LABEL and PKCS11_PIN_FILE');
  return { module, tokenLabel, pinFile };
}
