import { randomUUID } from 'node:crypto';
import type { Config } from './config/config.ts';
import type { Logger } from './shared/logger.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import { preparePrivateDataDir } from './shared/private-data-dir.ts';
import { createKeyVault, loadMasterKey, type KeyVault } from './shared/key-vault.ts';
import { openStore, type Store } from './store/db.ts';
import { createWalletRepository } from './store/wallet-repository.ts';
import { createAuthorizationRepository } from './store/authorization-repository.ts';
import { createChainJournal } from './store/chain-journal-repository.ts';
import { startChains } from './chain/chain-supervisor.ts';
import { createChainClients, type ChainClients } from './chain/chain-clients.ts';
import { createRelayer, type Relayer } from './chain/relayer.ts';
import { fundRelayerOnManagedChains, loadPlatformAccount } from './chain/platform-account.ts';
import { ensurePlatformContracts, vixpDecimals, vixpName, vixpSymbol, type PlatformContractsByNetwork } from './chain/platform-contracts.ts';
import { networkNames } from './chain/networks.ts';
import { createWalletService, type WalletService } from './wallet/wallet-service.ts';
import { createIdentity, type Identity } from './identity/identity-service.ts';
import { startDid, type DidModule } from './did/did-module.ts';
import type { IpfsBackend } from './ipfs/ipfs-backend.ts';
import { createEmbeddedBackend } from './ipfs/embedded-backend.ts';
import { createKuboBackend } from './ipfs/kubo-backend.ts';

const authorizationSweepMs = 15_000;

/** The core every interface stands on: store, chains, relayer, platform contracts, wallet. */
export interface Platform {
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
  stop(): Promise<void>;
}

export interface StartPlatformOptions {
  /** `own` for the server; `attach` for a CLI command run beside it (see startChains). */
  chainMode?: 'own' | 'attach';
  clock?: Clock;
}

/**
 * Brings the core up: makes DATA_DIR private (umask 077, the directory 0700), opens (and migrates)
 * the store, starts or reaches the chains, finishes any transaction journaled before a crash, then
 * deploys or finds the platform contracts.
 */
export async function startPlatform(config: Config, logger: Logger, options: StartPlatformOptions = {}): Promise<Platform> {
  const clock = options.clock ?? systemClock;
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
    const wallet = createWalletService({
      repo, vault, clock, chains, relayer, contracts, tempKeyTtlMs: config.tempKeyTtlSeconds * 1000,
      authorizations: createAuthorizationRepository(store.db), authorizationTtlSeconds: config.authorizationTtlSeconds,
    });
    // Authorizations left open by a crash or a chain outage end used, cancelled or expired once
    // their short validity has passed; their held funds are then free again.
    const sweep = () => Promise.all(networkNames.map((network) => wallet.sweepExpiredAuthorizations(network)))
      .catch((err: unknown) => logger.warn({ err }, 'authorization sweep failed'));
    await sweep();
    const sweeper = setInterval(() => void sweep(), authorizationSweepMs);
    sweeper.unref();
    cleanups.push(async () => clearInterval(sweeper));
    const identity = await createIdentity({ db: store.db, clock, dataDir: config.dataDir, jwtTtlSeconds: config.jwtTtlSeconds });
    const did = await startDid({
      db: store.db, vault, wallets: repo, clock,
      chain: { rpcUrl: chains.ethereum.url, chainId: chains.ethereum.chainId, registry: contracts.ethereum.didRegistry },
    });
    const ipfs = config.ipfsApiUrl ? createKuboBackend({ apiUrl: config.ipfsApiUrl }) : await createEmbeddedBackend({ dataDir: config.dataDir });
    cleanups.push(async () => { await ipfs.close(); });
    logger.info({ relayer: account.address, contracts }, 'platform ready');
    return { config, logger, clock, store, vault, chains, relayer, contracts, wallet, identity, did, ipfs, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
