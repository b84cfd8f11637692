/**
 * The composition root: the one function that picks every backend and builds every service with
 * its explicit dependencies. `src/main.ts` puts what it builds behind the transports (and gives the
 * CLI what its commands need); no domain folder, transport or CLI command imports this folder.
 *
 * Backends, each chosen from the configuration:
 * - relational store: PostgreSQL (`DATABASE_URL`) or SQLite in DATA_DIR (foundation.ts);
 * - chains: a JSON-RPC URL per network (`RPC_URL_<NETWORK>`) or a supervised anvil (chain.ts);
 * - IPFS: Kubo (`IPFS_API_URL`) or the embedded unixfs blockstore;
 * - pairing of payment streams: Redis (`REDIS_URL`) or in-process (payments.ts).
 *
 * Its pieces, in the order they are built: foundation.ts (DATA_DIR, keys, store, fleet), chain.ts,
 * wallet.ts, identity.ts, did.ts (with receipts), payments.ts, background.ts, observability.ts,
 * web.ts (what the HTTP interfaces need besides).
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Pkcs11Token } from '../chain/pkcs11-token.ts';
import { createFaults } from '#shared/failpoints.ts';
import { createMetrics, type Metrics } from '#shared/metrics.ts';
import type { Readiness } from '#shared/readiness.ts';
import { withinMs } from '#shared/within-ms.ts';
import type { Store } from '../store/db.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import { createBlockReader, type BlockReader } from '../chain/get-block.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { IpfsBackend } from '../ipfs/ipfs-backend.ts';
import { createEmbeddedBackend } from '../ipfs/embedded-backend.ts';
import { createKuboBackend } from '../ipfs/kubo-backend.ts';
import { createPostgresBackend } from '../ipfs/postgres-backend.ts';
import type { ReceiptService } from '../receipts/receipt-service.ts';
import { openFoundation } from './foundation.ts';
import { composeChain } from './chain.ts';
import { composeWallet } from './wallet.ts';
import { composeIdentity, type Identity } from './identity.ts';
import { composeDid, composeReceipts, type DidModule } from './did.ts';
import { composePayments, composeStoreAdmin, type PaymentPart, type StoreAdmin } from './payments.ts';
import { startRecordSweeps, startWebhooks } from './background.ts';
import { composeObservability } from './observability.ts';
import { composeWeb, type WebServices } from './web.ts';
import { composeStatements } from './statements.ts';
import type { StatementService } from '../statements/statement-service.ts';
import { composeX402 } from './x402.ts';
import type { X402Service } from '../x402/x402-service.ts';

export type { Identity } from './identity.ts';
export type { DidModule } from './did.ts';
export type { PaymentPart } from './payments.ts';

/** Everything the transports and the CLI stand on. */
export interface Platform extends PaymentPart, WebServices {
  config: Config;
  logger: Logger;
  clock: Clock;
  store: Store;
  vault: KeyVault;
  chains: ChainClients;
  /** `getBlock` with the blocks that can no longer change kept in memory. */
  blocks: BlockReader;
  relayer: Relayer;
  contracts: PlatformContractsByNetwork;
  wallet: WalletService;
  identity: Identity;
  did: DidModule;
  /** Kubo when IPFS_API_URL is set; otherwise the embedded importer over the fleet's PostgreSQL (IPFS_BLOCKSTORE=postgres) or DATA_DIR/ipfs. */
  ipfs: IpfsBackend;
  /** The HSM token holding the relayer's lanes and wrapping the wallets' keys (KEY_CUSTODY=pkcs11), else undefined. */
  custody: Pkcs11Token | undefined;
  /** Receipts (verifiable credentials) of approvals, refunds and reward claims, issued on first read. */
  receipts: ReceiptService;
  /** What the operator's store and token commands work with. */
  admin: StoreAdmin;
  /** Daily statements of stores and the operator's day, reconciled against the chain (docs/statements.md). */
  statements: StatementService;
  /** The x402 facilitator and what its routes need (docs/x402.md). */
  x402: X402Service;
  /** Prometheus metrics (`GET /metrics`) and the dependencies `GET /readyz` probes. */
  metrics: Metrics;
  readiness: Readiness;
  /**
   * Stops every part, the chains last (after the store, so the journal is flushed before a node we
   * run stops). With `timeoutMs`, each step gets an equal share of the time left and is abandoned
   * (logged) past it, so a Redis, PostgreSQL or node that does not answer cannot hold the rest up.
   */
  stop(options?: { timeoutMs?: number }): Promise<void>;
}

export interface ComposeOptions {
  /** `own` for the server; `attach` for a CLI command run beside it (see startChains). */
  chainMode?: 'own' | 'attach';
  /** `config` (Redis with REDIS_URL) for a server; a CLI command never pairs streams: `in-process`. */
  pairing?: 'config' | 'in-process';
  /** Prefix of the Redis desk's keys and channels; default `vixpay:pairing`. */
  redisKeyPrefix?: string;
  clock?: Clock;
  /**
   * `false`: this platform leaves transactions journaled by others to them (no recovery at start,
   * no stale rebroadcast). A test's observer on a fleet's database, so that what it checks was
   * finished by the fleet; default `true`.
   */
  finishJournal?: boolean;
}

/**
 * Brings the platform up: makes DATA_DIR private (umask 077, the directory 0700), opens (and
 * migrates) the store, starts or reaches the chains, finishes any transaction journaled before a
 * crash, deploys or finds the platform contracts, and builds every service on them.
 */
export async function composePlatform(config: Config, logger: Logger, options: ComposeOptions = {}): Promise<Platform> {
  const clock = options.clock ?? systemClock;
  const server = (options.chainMode ?? 'own') === 'own';
  const redis = options.pairing !== 'in-process' && Boolean(config.redisUrl);
  // Test-only fault injection (docs/reliability.md "Failpoints"), handed to the services; never silent when on.
  const faults = createFaults(config.failpoints);
  if (config.failpoints.size > 0) {
    logger.warn({ failpoints: Object.fromEntries(config.failpoints) }, 'test-only failpoints are armed');
  }
  const metrics = createMetrics();
  const cleanups: Array<() => Promise<void>> = [];
  let stopChains: (() => Promise<void>) | undefined;
  const stop = async (stopOptions: { timeoutMs?: number } = {}) => {
    const deadline = Date.now() + (stopOptions.timeoutMs ?? Infinity);
    const steps = [...cleanups.reverse(), ...(stopChains ? [stopChains] : [])];
    for (const [i, step] of steps.entries()) {
      await withinMs(Promise.resolve().then(step), (deadline - Date.now()) / (steps.length - i), `shutdown step ${i + 1} of ${steps.length}`)
        .catch((err: unknown) => logger.error({ err }, 'shutdown step failed'));
    }
  };
  try {
    const { vault, custody, store, fleet, fleetId, startup } = await openFoundation(config, logger, clock, { server, redis }, cleanups);
    const chain = await composeChain(config, { logger, clock, vault, store, fleet, metrics, faults, custody },
      { mode: options.chainMode ?? 'own', finishJournal: options.finishJournal ?? true }, cleanups);
    stopChains = chain.stopChains;
    const { chains, relayer, contracts } = chain;
    const { wallet, repo } = await composeWallet(config, { logger, clock, vault, store, metrics, chain, faults }, cleanups);

    // The throttle's Redis keys are the fleet's own (its id), or under the test's prefix.
    const loginKeyPrefix = options.redisKeyPrefix ? `${options.redisKeyPrefix}:login` : `vixpay:login:${fleetId}`;
    const identity = await composeIdentity(config, store, vault, clock, logger, { redis, loginKeyPrefix });
    cleanups.push(identity.close);
    cleanups.push(startRecordSweeps(config, { store, clock, logger, tempKeys: repo, websiteLogins: identity.websiteLogins }).stop);
    const did = await composeDid(store, vault, repo, clock, {
      rpcUrl: chains.ethereum.url, chainId: chains.ethereum.chainId, registry: contracts.ethereum.didRegistry, callTimeoutMs: config.chainCallTimeoutMs,
    }, chain.custody);
    const receipts = composeReceipts(config, { store, clock, did, wallet, chains });
    await startup.release();
    const ipfs = config.ipfsApiUrl ? createKuboBackend({ apiUrl: config.ipfsApiUrl })
      : config.ipfsBlockstore === 'postgres' ? await createPostgresBackend({ db: store.db, dataDir: config.dataDir })
        : await createEmbeddedBackend({ dataDir: config.dataDir });
    cleanups.push(async () => { await ipfs.close(); });

    const paymentPart = await composePayments({ config, logger, clock, store, wallet, faults }, { redis, redisKeyPrefix: options.redisKeyPrefix });
    cleanups.push(paymentPart.close);
    // The server sends store webhooks from the events outbox; a CLI command beside it does not.
    if (server) cleanups.push(startWebhooks(config, { store, vault, clock, metrics, logger }).stop);
    const x402 = await composeX402({
      store, clock, logger, metrics, chains, relayer, contracts, receipts, eip6492Factories: config.x402Eip6492Factories, maxHoldSeconds: config.x402MaxHoldSeconds, custody: chain.custody, faults,
    }, { server }, cleanups);
    const { readiness, close: closeProbes } = composeObservability({
      store, chains, ipfs, relayer, metrics, logger, redisUrl: redis ? config.redisUrl : undefined,
      // Twice the receipt wait: by then every instance's recovery has had its turns at it.
      stuckAfterMs: 2 * config.receiptTimeoutMs, now: clock, custody: chain.custody,
    });
    cleanups.push(closeProbes);

    const statements = composeStatements(config, { store, clock, logger, chains, wallet }, { server }, cleanups);

    logger.info({ relayer: relayer.address, lanes: relayer.lanes, contracts }, 'platform ready');
    return {
      config, logger, clock, store, vault, chains, blocks: createBlockReader(chains, { confirmations: config.confirmations }), relayer, contracts, wallet, identity, did, ipfs, receipts, metrics, readiness,
      custody: chain.custody,
      payments: paymentPart.payments, rewards: paymentPart.rewards, desk: paymentPart.desk,
      admin: composeStoreAdmin(config, { store, wallet, clock, chains }),
      statements,
      x402,
      ...composeWeb(config, { store, clock, chains, relayer, wallet, identity, receipts, faults, did, contracts }),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

export { composeDid } from './did.ts';
export { composePayments } from './payments.ts';
