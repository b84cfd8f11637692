/**
 * The chains: a supervised anvil per network, or a JSON-RPC URL per network (`RPC_URL_<NETWORK>`);
 * their clients, the relayer over the platform account's lanes, recovery of what a crash left
 * journaled, and the platform contracts (VIXP, settlement, DID registry) deployed or found.
 */
import { randomUUID } from 'node:crypto';
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Metrics } from '#shared/metrics.ts';
import { networkNames } from '#shared/networks.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Faults } from '#shared/failpoints.ts';
import type { Store } from '../store/db.ts';
import type { FleetRepository } from '../store/fleet-repository.ts';
import { createChainJournal } from '../store/chain-journal-repository.ts';
import { checkFleet, relayerAccountFingerprint } from '../fleet/fleet-check.ts';
import { startChains } from '../chain/chain-supervisor.ts';
import { createChainClients, type ChainClients } from '../chain/chain-clients.ts';
import { createRelayer, type Relayer } from '../chain/relayer.ts';
import { fundRelayerOnManagedChains, loadRelayerLanes } from '../chain/platform-account.ts';
import type { Pkcs11Token } from '../chain/pkcs11-token.ts';
import { loadTokenLanes } from '../chain/token-account.ts';
import { ensurePlatformContracts, type PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import { recordMinedCost } from './observability.ts';

/** Below the shortest block time of the networks we name (opBNB, 0.25 s), with room for a lagging poll. */
const fastestBlockMs = 200;

/** A journaled transaction without a receipt this long after it was signed is rebroadcast by whichever instance sweeps first. */
const staleTransactionMs = 5_000;
const staleSweepMs = 2_000;

export interface ChainPart {
  chains: ChainClients;
  relayer: Relayer;
  contracts: PlatformContractsByNetwork;
  /** The HSM token holding the lanes' keys (`KEY_CUSTODY=pkcs11`): `/readyz` probes it. */
  custody?: Pkcs11Token | undefined;
  /** Stops the nodes we run (the last step of a stop). */
  stopChains(): Promise<void>;
}

export async function composeChain(
  config: Config,
  deps: {
    logger: Logger; clock: Clock; vault: KeyVault; store: Store; fleet: FleetRepository; metrics: Metrics; faults: Faults;
    /** The HSM token (the foundation's, KEY_CUSTODY=pkcs11): one per library in a process. */
    custody?: Pkcs11Token | undefined;
  },
  options: { mode: 'own' | 'attach'; finishJournal: boolean },
  cleanups: Array<() => Promise<void>>,
): Promise<ChainPart> {
  const { logger, clock, metrics } = deps;
  const supervisor = await startChains({
    dataDir: config.dataDir, rpcUrls: config.rpcUrls, wsUrls: config.wsUrls, chainIds: config.chainIds, logger, mode: options.mode, checkpointIntervalMs: config.chainCheckpointMs,
  });
  const part = { stopChains: () => supervisor.stop() };
  try {
    // A `crash-chain` failpoint (test only) kills the payment network's anvil, when we run it.
    const killPaymentNode = () => {
      const pid = supervisor.nodePid(config.paymentNetwork);
      if (pid !== undefined) process.kill(pid, 'SIGKILL');
    };
    deps.faults.onChainNodeCrash(killPaymentNode);
    const chains = await createChainClients(supervisor.endpoints, config.chainPollMs, config.confirmations,
      (network, method) => metrics.nodeRpcCalls.inc({ network, method }), config.chainCallTimeoutMs,
      (network, endpoint, outcome) => {
        const labels = { network, endpoint: String(endpoint.index), host: endpoint.host };
        metrics.nodeEndpointCalls.inc({ ...labels, outcome });
        metrics.nodeEndpointUp.set(labels, outcome === 'ok' ? 1 : 0);
      });
    // Before the nodes stop: pending receipt waits end (the relayer leaves them journaled for recovery).
    cleanups.push(async () => { for (const network of networkNames) chains[network].receipts.close(); });
    const { custody } = deps;
    // File custody: every other lane is derived from the platform account's key; pkcs11: a key each in the token.
    const lanes = custody ? await loadTokenLanes(custody, config.relayerLanes)
      : loadRelayerLanes({ privateKey: config.relayerPrivateKey, dataDir: config.dataDir, vault: deps.vault, count: config.relayerLanes });
    // The platform account (lane 0).
    await checkFleet(deps.fleet, { relayer_account: relayerAccountFingerprint((lanes[0] as (typeof lanes)[number]).address) }, clock());
    // The server says once which lanes of a node we do not run are low; a CLI command beside it does not repeat it.
    await fundRelayerOnManagedChains(chains, lanes.map((lane) => lane.address), logger, { warn: options.mode === 'own' });
    const journal = createChainJournal(deps.store.db, randomUUID);
    const relayer = createRelayer({
      journal, chains, lanes, clock, logger: logger.child({ component: 'relayer' }), receiptTimeoutMs: config.receiptTimeoutMs,
      batch: { windowMs: config.settlementBatchWindowMs, maxItems: config.settlementBatchMaxItems, blockMarginMs: config.settlementBlockMarginMs },
      onBatch: (network, size) => metrics.settlementBatchSize.observe({ network }, size),
      repricing: { afterMs: config.repriceAfterMs, maxFeePerGas: config.maxFeePerGasWei },
      onReprice: (network) => metrics.relayerRepriced.inc({ network }),
      onMined: recordMinedCost(metrics), faults: deps.faults,
    });
    if (options.finishJournal) {
      await Promise.all(networkNames.map((network) => relayer.recover(network)));
      // Any instance finishes a transaction journaled and left without a receipt (an instance that
      // died between journaling and broadcasting holds its lane's next nonces for every instance).
      cleanups.push(runPeriodically(() => Promise.all(networkNames.map((network) => relayer.rebroadcastStale(network, staleTransactionMs)))
        .then(() => undefined, (err: unknown) => logger.warn({ err }, 'stale transaction sweep failed')), staleSweepMs).stop);
    }
    const contracts = await ensurePlatformContracts({ journal, chains, relayer, clock, configured: config.contractAddresses });
    // The start's deployments, one after another, each mined at its send on a node that mines on
    // demand, look like blocks a few tens of ms apart: a rhythm faster than any network we name
    // (0.25 s at the fastest) learnt from them is forgotten (docs/decisions/settlement.md).
    for (const network of networkNames) {
      const { blocks } = chains[network];
      if ((blocks.intervalMs() ?? Number.POSITIVE_INFINITY) < fastestBlockMs) blocks.forgetRhythm();
    }
    return { ...part, chains, relayer, contracts, custody };
  } catch (error) {
    await part.stopChains().catch(() => undefined);
    throw error;
  }
}
