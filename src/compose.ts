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
import type { Config } from './config/config.ts';
import type { Logger } from './shared/logger.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { preparePrivateDataDir } from './shared/private-data-dir.ts';
import { createKeyVault, loadMasterKey, type KeyVault } from './shared/key-vault.ts';
import { openStore, type Store } from './store/db.ts';
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
import { createRelayer, type Relayer } from './chain/relayer.ts';
import { fundRelayerOnManagedChains, loadPlatformAccount } from './chain/platform-account.ts';
import { ensurePlatformContracts, vixpDecimals, vixpName, vixpSymbol, type PlatformContractsByNetwork } from './chain/platform-contracts.ts';
import { networkNames } from './shared/networks.ts';
import { createWalletService, type WalletService } from './wallet/wallet-service.ts';
import { createPasswordHasher } from './identity/password-hasher.ts';
import { createUserRepository } from './identity/user-repository.ts';
import { createUserService, type UserService } from './identity/users.ts';
import { loadOrCreateSigningKeys, signingKeyFileName } from './identity/signing-keys.ts';
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
import { scheduleRecordSweeps } from './record-sweeps.ts';
import { runPeriodically } from './shared/periodic.ts';
import { createMetrics, type Metrics } from './shared/metrics.ts';
import type { Readiness } from './shared/readiness.ts';
import { composeObservability, withTransferMetrics } from './platform-observability.ts';

const authorizationSweepMs = 15_000;

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
  relayer: Relayer;
  contracts: PlatformContractsByNetwork;
  wallet: WalletService;
  identity: Identity;
  did: DidModule;
  /** Kubo when IPFS_API_URL is set; otherwise the embedded blockstore in DATA_DIR/ipfs. */
  ipfs: IpfsBackend;
  /** Prometheus metrics (`GET /metrics`) and the dependencies `GET /readyz` probes. */
  metrics: Metrics;
  readiness: Readiness;
  stop(): Promise<void>;
}

export interface ComposeOptions {
  /** `own` for the server; `attach` for a CLI command run beside it (see startChains). */
  chainMode?: 'own' | 'attach';
  /** `config` (Redis with REDIS_URL) for a server; a CLI command never pairs streams: `in-process`. */
  pairing?: 'config' | 'in-process';
  /** Prefix of the Redis desk's keys and channels; default `vixpay:pairing`. */
  redisKeyPrefix?: string;
  clock?: Clock;
}

/**
 * Brings the platform up: makes DATA_DIR private (umask 077, the directory 0700), opens (and
 * migrates) the store, starts or reaches the chains, finishes any transaction journaled before a
 * crash, deploys or finds the platform contracts, and builds every service on them.
 */
export async function composePlatform(config: Config, logger: Logger, options: ComposeOptions = {}): Promise<Platform> {
  const clock = options.clock ?? systemClock;
  const metrics = createMetrics();
  // Before the first file is written: DATA_DIR 0700, everything in it 0600 (keys, SQLite, chain state, IPFS).
  preparePrivateDataDir(config.dataDir);
  const vault = createKeyVault(loadMasterKey(config));
  const store = await openStore(config);
  const cleanups: Array<() => Promise<void>> = [() => store.close()];
  const stop = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((err: unknown) => logger.error({ err }, 'shutdown step failed'));
  };
  try {
    const supervisor = await startChains({ dataDir: config.dataDir, rpcUrls: config.rpcUrls, logger, mode: options.chainMode ?? 'own' });
    cleanups.push(() => supervisor.stop());
    const chains = await createChainClients(supervisor.endpoints, config.chainPollMs);
    const account = loadPlatformAccount({ privateKey: config.relayerPrivateKey, dataDir: config.dataDir, vault });
    await fundRelayerOnManagedChains(chains, account.address, logger);
    const journal = createChainJournal(store.db, randomUUID);
    const relayer = createRelayer({
      journal, chains, account, clock, logger: logger.child({ component: 'relayer' }), receiptTimeoutMs: config.receiptTimeoutSeconds * 1000,
    });
    await Promise.all(networkNames.map((network) => relayer.recover(network)));
    const repo = createWalletRepository(store.db);
    const contracts = await ensurePlatformContracts({ journal, chains, relayer, clock });
    // VIXP is a token of the wallet on every network (owned by the platform account).
    for (const network of networkNames) {
      await repo.insertToken({
        network, contract_address: contracts[network].vixpToken, symbol: vixpSymbol, name: vixpName, decimals: vixpDecimals,
        owner: relayer.address, created_at: clock(),
      });
    }
    const wallet = withTransferMetrics(createWalletService({
      repo, vault, clock, chains, relayer, contracts, tempKeyTtlMs: config.tempKeyTtlSeconds * 1000,
      authorizations: createAuthorizationRepository(store.db), authorizationTtlSeconds: config.authorizationTtlSeconds,
    }), metrics);
    // Authorizations left open by a crash or a chain outage end used, cancelled or expired once
    // their short validity has passed; their held funds are then free again.
    const sweep = () => Promise.all(networkNames.map((network) => wallet.sweepExpiredAuthorizations(network)))
      .catch((err: unknown) => logger.warn({ err }, 'authorization sweep failed'));
    await sweep();
    cleanups.push(runPeriodically(sweep, authorizationSweepMs).stop);

    const identity = await composeIdentity(config, store, clock);
    // Temp keys, idempotency keys and website-login requests nobody can use any more.
    const recordSweeps = scheduleRecordSweeps({
      tempKeys: repo, idempotencyKeys: createIdempotencyRepository(store.db), websiteLogins: identity.websiteLogins,
      clock, logger, usedTempKeyGraceMs: config.tempKeyUsedGraceSeconds * 1000,
    }, config.sweepIntervalSeconds * 1000);
    cleanups.push(recordSweeps.stop);
    const did = await composeDid(store, vault, repo, clock, {
      rpcUrl: chains.ethereum.url, chainId: chains.ethereum.chainId, registry: contracts.ethereum.didRegistry,
    });
    const ipfs = config.ipfsApiUrl ? createKuboBackend({ apiUrl: config.ipfsApiUrl }) : await createEmbeddedBackend({ dataDir: config.dataDir });
    cleanups.push(async () => { await ipfs.close(); });

    const core = { config, logger, clock, store, wallet };
    const pairing = options.pairing === 'in-process' ? { ...options, redis: false } : { ...options, redis: Boolean(config.redisUrl) };
    const paymentPart = await composePayments(core, pairing);
    cleanups.push(paymentPart.close);
    const { readiness, close: closeProbes } = composeObservability({
      store, chains, ipfs, relayerAddress: relayer.address, metrics, logger, redisUrl: pairing.redis ? config.redisUrl : undefined,
    });
    cleanups.push(closeProbes);

    logger.info({ relayer: account.address, contracts }, 'platform ready');
    return {
      config, logger, clock, store, vault, chains, relayer, contracts, wallet, identity, did, ipfs, metrics, readiness,
      payments: paymentPart.payments, rewards: paymentPart.rewards, desk: paymentPart.desk, stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

async function composeIdentity(config: Config, store: Store, clock: Clock): Promise<Identity> {
  const users = createUserService({ users: createUserRepository(store.db), passwords: createPasswordHasher(), clock });
  const keys = await loadOrCreateSigningKeys(path.join(config.dataDir, signingKeyFileName));
  const jwt = createJwtService({ keys, clock, ttlSeconds: config.jwtTtlSeconds });
  const rateLimiter = createLoginRateLimiter({ clock });
  const login = createLoginService({ users, jwt, rateLimiter, clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(store.db), clock });
  return { users, jwt, login, websiteLogins, rateLimiter };
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
  };
  const rewards = createRewardService({
    rewards: createRewardRepository(core.store.db), merchants: deps.merchants, settlementTokens: deps.settlementTokens, idempotency: deps.idempotency,
    wallet: core.wallet, desk, clock: deps.clock, logger: deps.logger, network: deps.network, timeZone: deps.timeZone,
    defaultCurrency: deps.defaultCurrency, pairingWindowMs: deps.pairingWindowMs, rewardLifetimeMs: config.rewardLifetimeDays * 24 * 3600 * 1000,
  });
  return { payments: createPaymentService(deps), rewards, desk, close: async () => { await redisDesk?.close(); } };
}
