/**
 * The composition: the one place that picks every backend and builds every service with its
 * explicit dependencies. `src/main.ts` (the server) and the CLI call it; transports receive what it
 * builds. No domain folder imports this file.
 *
 * Backends, each chosen here from the configuration:
 * - relational store: PostgreSQL (`DATABASE_URL`) or SQLite in DATA_DIR (`openStore`);
 * - chains: a JSON-RPC URL per network (`RPC_URL_<NETWORK>`) or a supervised anvil (`startChains`);
 * - IPFS: Kubo (`IPFS_API_URL`) or the embedded unixfs blockstore;
 * - pairing of payment streams: Redis (`REDIS_URL`) or in-process.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { parseGwei } from 'viem';
import type { Config } from './config/config.ts';
import type { Logger } from './shared/logger.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { preparePrivateDataDir } from './shared/private-data-dir.ts';
import { createKeyVault, loadMasterKey, type KeyVault } from './shared/key-vault.ts';
import { openStore, type Store } from './store/db.ts';
import { acquireLock, tryLock } from './store/advisory-lock.ts';
import { createFleetRepository } from './store/fleet-repository.ts';
import { checkFleet, claimFleetId, masterKeyFingerprint, relayerAccountFingerprint } from './fleet/fleet-check.ts';
import { joinFleet } from './fleet/instance-membership.ts';
import { createWalletRepository } from './store/wallet-repository.ts';
import { createAuthorizationRepository } from './store/authorization-repository.ts';
import { createChainJournal } from './store/chain-journal-repository.ts';
import { createMerchantRepository } from './store/merchant-repository.ts';
import { createPaymentRepository } from './store/payment-repository.ts';
import { createSettlementTokenRepository } from './store/settlement-token-repository.ts';
import { createRewardRepository } from './store/reward-repository.ts';
import { createIdempotencyRepository } from './store/idempotency-repository.ts';
import { startChains } from './chain/chain-supervisor.ts';
import { createChainClients, type ChainClients } from './chain/chain-clients.ts';
import { createBlockReader, type BlockReader } from './chain/get-block.ts';
import { createRelayer, type Relayer } from './chain/relayer.ts';
import { fundRelayerOnManagedChains, loadRelayerLanes } from './chain/platform-account.ts';
import { ensurePlatformContracts, vixpDecimals, vixpName, vixpSymbol, type PlatformContractsByNetwork } from './chain/platform-contracts.ts';
import { networkNames } from './shared/networks.ts';
import { createWalletService, type WalletService } from './wallet/wallet-service.ts';
import { createPasswordHasher } from './identity/password-hasher.ts';
import { createUserRepository } from './identity/user-repository.ts';
import { createUserService, type UserService } from './identity/users.ts';
import { signingKeyFileName } from './identity/signing-keys.ts';
import { openSigningKeys } from './identity/signing-key-store.ts';
import { createSigningKeyRepository } from './identity/signing-key-repository.ts';
import { createRedisLoginRateLimiter } from './identity/redis-login-rate-limiter.ts';
import { createJwtService, type JwtService } from './identity/jwt.ts';
import { createLoginRateLimiter, type LoginRateLimiter } from './identity/login-rate-limiter.ts';
import { createLoginService, type LoginService } from './identity/login.ts';
import { createWebsiteLoginRepository } from './identity/website-login-repository.ts';
import { createWebsiteLoginService, type WebsiteLoginService } from './identity/website-login.ts';
import { createDidAgent, type DidAgent } from './did/did-agent.ts';
import { createDidRepository, type DidListEntry, type SystemDidRole } from './did/did-repository.ts';
import { ensureSystemDids } from './did/did-identifiers.ts';
import { createDidService, type DidService } from './did/did-service.ts';
import { createVpLogin, type VerifyLoginPresentation } from './did/vp-login.ts';
import { createHolderBinding, type FindUserIdByHolder } from './did/holder-binding.ts';
import type { IpfsBackend } from './ipfs/ipfs-backend.ts';
import { createEmbeddedBackend } from './ipfs/embedded-backend.ts';
import { createKuboBackend } from './ipfs/kubo-backend.ts';
import type { PairingDesk } from './pairing/pairing-desk.ts';
import { createPairingDesk } from './pairing/in-process-pairing-desk.ts';
import { createRedisPairingDesk } from './pairing/redis-pairing-desk.ts';
import { createPaymentService, type PaymentService } from './payments/payment-service.ts';
import type { PaymentDeps } from './payments/payment-deps.ts';
import { createRewardService, type RewardService } from './rewards/reward-service.ts';
import type { RewardDeps } from './rewards/reward-deps.ts';
import { settleStaleRewards } from './rewards/settle-stale-reward.ts';
import { settleStaleCancellations } from './payments/cancel-payment.ts';
import { createReceiptService, type ReceiptService } from './receipts/receipt-service.ts';
import { knownNetwork, signingIdentityOf } from './receipts/receipt-issuer.ts';
import { createReceiptRepository } from './store/receipt-repository.ts';
import { scheduleRecordSweeps } from './record-sweeps.ts';
import { runPeriodically } from './shared/periodic.ts';
import { withinMs } from './shared/within-ms.ts';
import { hostOf, probeRedis } from './shared/dependency-probe.ts';
import { describeFailure } from './shared/failure-summary.ts';
import { armFaults, onChainNodeCrash } from './shared/failpoints.ts';
import { createMetrics, type Metrics } from './shared/metrics.ts';
import type { Readiness } from './shared/readiness.ts';
import { composeObservability, recordMinedCost, withTransferMetrics } from './platform-observability.ts';
import { createWebhookRepository } from './store/webhook-repository.ts';
import { startWebhookWorker } from './webhooks/webhook-worker.ts';
import { resCodeByFamily } from './transports/grpc/res-codes.ts';
import { domainErrorCodes, type DomainErrorCode } from './shared/errors.ts';

const authorizationSweepMs = 15_000;
/** A journaled transaction without a receipt this long after it was signed is rebroadcast by whichever instance sweeps first. */
const staleTransactionMs = 5_000;
const staleSweepMs = 2_000;

export interface Identity {
  users: UserService;
  jwt: JwtService;
  login: LoginService;
  websiteLogins: WebsiteLoginService;
  /** Failed-password throttle shared by every password check (login, REST pay). */
  rateLimiter: LoginRateLimiter;
}

/** DIDs, VCs and VPs of the platform. */
export interface DidModule {
  agent: DidAgent;
  service: DidService;
  verifyLoginPresentation: VerifyLoginPresentation;
  /** The user a VP holder logs in as (see holder-binding.ts). */
  findUserIdByHolder: FindUserIdByHolder;
  systemDids: Record<SystemDidRole, DidListEntry[]>;
}

/** The payment and reward services over one pairing desk (a payment server instance's share). */
export interface PaymentPart {
  payments: PaymentService;
  rewards: RewardService;
  /** The desk they pair on: what an operator (or a test) inspects. */
  desk: PairingDesk;
}

/** Everything the transports and the CLI stand on. */
export interface Platform extends PaymentPart {
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
  /** Kubo when IPFS_API_URL is set; otherwise the embedded blockstore in DATA_DIR/ipfs. */
  ipfs: IpfsBackend;
  /** Receipts (verifiable credentials) of approvals, refunds and reward claims, issued on first read. */
  receipts: ReceiptService;
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
  // Test-only fault injection (docs/reliability.md): never silent when on.
  armFaults(config.failpoints);
  if (config.failpoints.size > 0) {
    logger.warn({ failpoints: Object.fromEntries(config.failpoints) }, 'test-only failpoints are armed');
  }
  const metrics = createMetrics();
  // Before the first file is written: DATA_DIR 0700, everything in it 0600 (keys, SQLite, chain state, IPFS).
  preparePrivateDataDir(config.dataDir);
  const masterKey = loadMasterKey(config);
  const vault = createKeyVault(masterKey);
  // A dependency named in the configuration that does not answer stops the start with one line
  // naming its setting: never an instance left half-started.
  const store = await openStore({
    ...config,
    onConnectionError: (err) => logger.warn({ err }, 'a PostgreSQL connection was lost; a new one is opened when next needed'),
  }).catch((error: unknown) => {
    const where = config.databaseUrl ? `PostgreSQL (DATABASE_URL, ${hostOf(config.databaseUrl)})` : `SQLite (DATA_DIR, ${config.dataDir})`;
    throw new Error(`${where} cannot be opened: ${describeFailure(error)}`, { cause: error });
  });
  if (config.redisUrl && options.pairing !== 'in-process') {
    await probeRedis(config.redisUrl).catch(async (error: unknown) => { await store.close().catch(() => undefined); throw error; });
  }
  const cleanups: Array<() => Promise<void>> = [() => store.close()];
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
    // Many instances on one PostgreSQL (docs/operations.md "Production topology"): a server instance is a
    // member of the fleet while it runs (with embedded IPFS only alone); one instance at a time sets
    // the platform up (first start: contracts, nonces, JWT keys, system DIDs), so cold starts never
    // race; every instance must share the fleet's master key and relayer (fingerprints, fleet table).
    if ((options.chainMode ?? 'own') === 'own') {
      cleanups.push((await joinFleet(store, config.ipfsApiUrl ? 'kubo' : 'embedded', {
        onLost: (err) => logger.warn({ err }, 'fleet membership lost with its database connection; joining again'),
        onRejoined: () => logger.info('fleet membership held again'),
      })).release);
    }
    let startup = await tryLock(store, 'startup', 'exclusive');
    if (!startup) {
      logger.info('another instance is setting the platform up on this database; waiting for it to finish');
      startup = await acquireLock(store, 'startup');
    }
    cleanups.push(() => startup.release());
    const fleet = createFleetRepository(store.db);
    await checkFleet(fleet, { master_key: masterKeyFingerprint(masterKey) }, clock());
    const fleetId = await claimFleetId(fleet, clock());
    const supervisor = await startChains({
      dataDir: config.dataDir, rpcUrls: config.rpcUrls, logger, mode: options.chainMode ?? 'own', checkpointIntervalMs: config.chainCheckpointSeconds * 1000,
    });
    stopChains = () => supervisor.stop();
    // A `crash-chain` failpoint (test only) kills the payment network's anvil, when we run it.
    onChainNodeCrash(() => {
      const pid = supervisor.nodePid(config.paymentNetwork);
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    });
    const chains = await createChainClients(supervisor.endpoints, config.chainPollMs, config.confirmations,
      (network, method) => metrics.nodeRpcCalls.inc({ network, method }));
    // Before the nodes stop: pending receipt waits end (the relayer leaves them journaled for recovery).
    cleanups.push(async () => { for (const network of networkNames) chains[network].receipts.close(); });
    const lanes = loadRelayerLanes({ privateKey: config.relayerPrivateKey, dataDir: config.dataDir, vault, count: config.relayerLanes });
    // The platform account (lane 0): every other lane is derived from its key.
    await checkFleet(fleet, { relayer_account: relayerAccountFingerprint((lanes[0] as (typeof lanes)[number]).address) }, clock());
    await fundRelayerOnManagedChains(chains, lanes.map((lane) => lane.address), logger);
    const journal = createChainJournal(store.db, randomUUID);
    const relayer = createRelayer({
      journal, chains, lanes, clock, logger: logger.child({ component: 'relayer' }), receiptTimeoutMs: config.receiptTimeoutSeconds * 1000,
      batch: config.settlementBatch, onBatch: (network, size) => metrics.settlementBatchSize.observe({ network }, size),
      repricing: { afterMs: config.repricing.afterSeconds * 1000, maxFeePerGas: parseGwei(String(config.repricing.maxFeePerGasGwei)) },
      onReprice: (network) => metrics.relayerRepriced.inc({ network }),
      onMined: recordMinedCost(metrics),
    });
    if (options.finishJournal ?? true) {
      await Promise.all(networkNames.map((network) => relayer.recover(network)));
      // Any instance finishes a transaction journaled and left without a receipt (an instance that
      // died between journaling and broadcasting holds its lane's next nonces for every instance).
      cleanups.push(runPeriodically(() => Promise.all(networkNames.map((network) => relayer.rebroadcastStale(network, staleTransactionMs)))
        .then(() => undefined, (err: unknown) => logger.warn({ err }, 'stale transaction sweep failed')), staleSweepMs).stop);
    }
    const repo = createWalletRepository(store.db);
    const contracts = await ensurePlatformContracts({ journal, chains, relayer, clock, configured: config.contractAddresses });
    // VIXP is a token of the wallet on every network (owned by the platform account).
    for (const network of networkNames) {
      await repo.insertToken({
        network, contract_address: contracts[network].vixpToken, symbol: vixpSymbol, name: vixpName, decimals: vixpDecimals,
        owner: relayer.address, created_at: clock(),
      });
    }
    const wallet = withTransferMetrics(createWalletService({
      repo, vault, clock, chains, relayer, contracts, tempKeyTtlMs: config.tempKeyTtlSeconds * 1000,
      authorizations: createAuthorizationRepository(store.db, store.dialect === 'sqlite' ? 'process' : 'row'), authorizationTtlSeconds: config.authorizationTtlSeconds,
    }), metrics);
    // Authorizations left open by a crash or a chain outage end used, cancelled or expired once
    // their short validity has passed; their held funds are then free again.
    const sweep = () => Promise.all(networkNames.map((network) => wallet.sweepExpiredAuthorizations(network)))
      .catch((err: unknown) => logger.warn({ err }, 'authorization sweep failed'));
    await sweep();
    cleanups.push(runPeriodically(sweep, authorizationSweepMs).stop);

    // The throttle's Redis keys are the fleet's own (its id), or under the test's prefix.
    const loginKeyPrefix = options.redisKeyPrefix ? `${options.redisKeyPrefix}:login` : `vixpay:login:${fleetId}`;
    const identity = await composeIdentity(config, store, vault, clock, logger, { redis: pairingOver(config, options).redis, loginKeyPrefix });
    cleanups.push(identity.close);
    // Temp keys, idempotency keys and website-login requests nobody can use any more.
    const recordSweeps = scheduleRecordSweeps({
      tempKeys: repo, idempotencyKeys: createIdempotencyRepository(store.db), websiteLogins: identity.websiteLogins,
      clock, logger, usedTempKeyGraceMs: config.tempKeyUsedGraceSeconds * 1000,
    }, config.sweepIntervalSeconds * 1000);
    cleanups.push(recordSweeps.stop);
    const did = await composeDid(store, vault, repo, clock, {
      rpcUrl: chains.ethereum.url, chainId: chains.ethereum.chainId, registry: contracts.ethereum.didRegistry,
    });
    const receipts = createReceiptService({
      receipts: createReceiptRepository(store.db), agent: did.agent, clock, timeZone: config.timeZone,
      issuer: () => signingIdentityOf(did.agent, did.systemDids.issuer[0]!.did),
      tokenDecimals: async (network, contractAddress) => (await wallet.getTokenInfo(knownNetwork(network), { contractAddress })).decimals,
      chainIdOf: (network) => chains[knownNetwork(network)].chainId,
    });
    await startup.release();
    const ipfs = config.ipfsApiUrl ? createKuboBackend({ apiUrl: config.ipfsApiUrl }) : await createEmbeddedBackend({ dataDir: config.dataDir });
    cleanups.push(async () => { await ipfs.close(); });

    const core = { config, logger, clock, store, wallet };
    const pairing = pairingOver(config, options);
    const paymentPart = await composePayments(core, pairing);
    cleanups.push(paymentPart.close);
    // The server sends store webhooks from the events outbox; a CLI command beside it does not.
    if ((options.chainMode ?? 'own') === 'own') {
      const webhooks = startWebhookWorker({
        config, repository: createWebhookRepository(store.db, store.dialect), vault, clock, registry: metrics.registry,
        logger: logger.child({ component: 'webhooks' }),
        resCodeOf: (code) => resCodeByFamily.payment[(domainErrorCodes as readonly string[]).includes(code) ? code as DomainErrorCode : 'internal'],
      });
      cleanups.push(webhooks.stop);
    }
    const { readiness, close: closeProbes } = composeObservability({
      store, chains, ipfs, relayer, metrics, logger, redisUrl: pairing.redis ? config.redisUrl : undefined,
      // Twice the receipt wait: by then every instance's recovery has had its turns at it.
      stuckAfterMs: 2 * config.receiptTimeoutSeconds * 1000, now: clock,
    });
    cleanups.push(closeProbes);

    logger.info({ relayer: relayer.address, lanes: relayer.lanes, contracts }, 'platform ready');
    return {
      config, logger, clock, store, vault, chains, blocks: createBlockReader(chains, { confirmations: config.confirmations }), relayer, contracts, wallet, identity, did, ipfs, receipts, metrics, readiness,
      payments: paymentPart.payments, rewards: paymentPart.rewards, desk: paymentPart.desk, stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Whether the payment streams (and the login throttle) go through Redis: a server with REDIS_URL. */
function pairingOver(config: Config, options: ComposeOptions): ComposeOptions & { redis: boolean } {
  return options.pairing === 'in-process' ? { ...options, redis: false } : { ...options, redis: Boolean(config.redisUrl) };
}

/**
 * Users, logins and JWTs. The signing keys are the fleet's, in the database (created by the first
 * instance, or imported once from `DATA_DIR/jwt-signing-key.json`); the failed-login throttle is in
 * Redis when the instances share one (REDIS_URL), so failures on every instance add up.
 */
async function composeIdentity(
  config: Config, store: Store, vault: KeyVault, clock: Clock, logger: Logger, throttle: { redis: boolean; loginKeyPrefix: string },
): Promise<Identity & { close(): Promise<void> }> {
  const users = createUserService({ users: createUserRepository(store.db), passwords: createPasswordHasher(), clock });
  const keys = await openSigningKeys({
    repository: createSigningKeyRepository(store.db), vault, clock, ttlSeconds: config.jwtTtlSeconds,
    importFile: path.join(config.dataDir, signingKeyFileName),
  });
  const jwt = createJwtService({ keys, clock, ttlSeconds: config.jwtTtlSeconds });
  const redisLimiter = throttle.redis && config.redisUrl
    ? await createRedisLoginRateLimiter({
      url: config.redisUrl, clock, logger: logger.child({ component: 'login-throttle' }), keyPrefix: throttle.loginKeyPrefix,
    })
    : undefined;
  const rateLimiter = redisLimiter ?? createLoginRateLimiter({ clock });
  const login = createLoginService({ users, jwt, rateLimiter, clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(store.db), clock });
  return {
    users, jwt, login, websiteLogins, rateLimiter,
    close: async () => { keys.close(); await redisLimiter?.close(); },
  };
}

/** The Veramo agent over our store and chain; the system issuer and verifier DIDs made on first start (reused after). */
export async function composeDid(
  store: Store, vault: KeyVault, wallets: ReturnType<typeof createWalletRepository>, clock: Clock,
  chain: { rpcUrl: string; chainId: number; registry: `0x${string}` },
): Promise<DidModule> {
  const agent = createDidAgent({ db: store.db, vault, clock, chain });
  const repository = createDidRepository(store.db);
  const systemDids = await ensureSystemDids({ agent, repository });
  const service = createDidService({ agent, repository, wallets, vault, clock });
  return {
    agent, service, systemDids,
    verifyLoginPresentation: createVpLogin({ agent, repository, clock }),
    findUserIdByHolder: createHolderBinding(store.db),
  };
}

/**
 * The payment and reward services over a pairing desk: Redis (`redis: true`, REDIS_URL) so that
 * instances pair each other's streams, or in-process. A second instance on the same platform (a
 * test of two instances) composes a second part.
 */
export async function composePayments(
  core: Pick<Platform, 'config' | 'logger' | 'clock' | 'store' | 'wallet'>,
  options: { redis: boolean; redisKeyPrefix?: string | undefined },
): Promise<PaymentPart & { close(): Promise<void> }> {
  const { config } = core;
  const idleTimeoutMs = config.paymentIdleTimeoutSeconds * 1000;
  const redisDesk = options.redis && config.redisUrl
    ? await createRedisPairingDesk({
      url: config.redisUrl, appWaitMs: idleTimeoutMs,
      ...(options.redisKeyPrefix && { keyPrefix: options.redisKeyPrefix }),
      logger: core.logger.child({ component: 'pairing' }),
    })
    : undefined;
  const desk = redisDesk ?? createPairingDesk({ appWaitMs: idleTimeoutMs });
  const deps: PaymentDeps = {
    merchants: createMerchantRepository(core.store.db),
    payments: createPaymentRepository(core.store.db),
    settlementTokens: createSettlementTokenRepository(core.store.db),
    wallet: core.wallet,
    desk,
    idempotency: createIdempotencyRepository(core.store.db),
    clock: core.clock,
    logger: core.logger.child({ component: 'payments' }),
    network: config.paymentNetwork,
    timeZone: config.timeZone,
    defaultCurrency: config.defaultCurrency,
    pairingWindowMs: config.paymentPairingWindowSeconds * 1000,
    idleTimeoutMs,
    staleOperationMs: config.staleOperationSeconds * 1000,
  };
  const rewardDeps: RewardDeps = {
    rewards: createRewardRepository(core.store.db), merchants: deps.merchants, settlementTokens: deps.settlementTokens, idempotency: deps.idempotency,
    wallet: core.wallet, desk, clock: deps.clock, logger: deps.logger, network: deps.network, timeZone: deps.timeZone,
    defaultCurrency: deps.defaultCurrency, pairingWindowMs: deps.pairingWindowMs, rewardLifetimeMs: config.rewardLifetimeDays * 24 * 3600 * 1000,
    staleOperationMs: deps.staleOperationMs,
  };
  // Refunds, reward claims and reward cancellations an instance left mid-run end as the chain says,
  // whether or not the POS retries them.
  const staleSweep = runPeriodically(() => settleStaleCancellations(deps).then(() => settleStaleRewards(rewardDeps))
    .catch((err: unknown) => core.logger.warn({ err }, 'sweep of interrupted operations failed')), config.sweepIntervalSeconds * 1000);
  return {
    payments: createPaymentService(deps), rewards: createRewardService(rewardDeps), desk,
    close: async () => { await staleSweep.stop(); await redisDesk?.close(); },
  };
}
