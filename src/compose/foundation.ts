/**
 * The ground every other part stands on: DATA_DIR made private, the master key, the relational store
 * (opened and migrated), the fleet membership and the start-up lock.
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

/** What the foundation holds; `cleanups` gets what must run at stop (in reverse). */
export interface Foundation {
  masterKey: Buffer;
  vault: KeyVault;
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
  const masterKey = loadMasterKey(config);
  const vault = createKeyVault(masterKey);
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
  await checkFleet(fleet, { master_key: masterKeyFingerprint(masterKey) }, clock());
  const fleetId = await claimFleetId(fleet, clock());
  return { masterKey, vault, store, fleet, fleetId, startup: held };
}
