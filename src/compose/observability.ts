/**
 * What `/readyz` probes and what `/metrics` reads at scrape time, over the composed backends
 * (the composition root builds it): the store, every chain, IPFS and Redis when the payment streams pair
 * through it. The listeners add their own probes once they listen (main.ts: gRPC).
 */
import { sql } from 'kysely';
import { createClient } from 'redis';
import { createPublicClient, formatEther, http } from 'viem';
import type { Logger } from '#shared/logger.ts';
import type { Metrics } from '#shared/metrics.ts';
import { createReadiness, type Readiness } from '#shared/readiness.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import type { Store } from '../store/db.ts';
import { countJournalBacklog, countPendingByRelayer, findStuckBacklog } from '../store/journal-backlog.ts';
import { sqliteDiskProbe } from '../store/sqlite-disk-probe.ts';
import type { MinedCost, Relayer } from '../chain/relayer.ts';
import { minimumGasBalance } from '../chain/fund-lanes.ts';
import { feePartsPer } from '../console/fee-parts.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import { countingRpcCalls } from '../chain/node-rpc-calls.ts';
import type { IpfsBackend } from '../ipfs/ipfs-backend.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { TransferOutcome } from '../wallet/transfer-outcome.ts';

/** Each probe's timeout: a load balancer's probe must not wait on a hung node. */
const probeTimeoutMs = 1000;
/** The relayer's gas balances are read at most this often, however often Prometheus scrapes. */
const gasBalanceCacheMs = 5000;

export interface ObservabilityDeps {
  store: Store;
  chains: ChainClients;
  ipfs: IpfsBackend;
  /** The relayer's lanes, the platform account first, and the transfers waiting for settlement. */
  relayer: Pick<Relayer, 'address' | 'lanes' | 'settlementQueue'>;
  metrics: Metrics;
  logger: Logger;
  /** The Redis the payment streams pair through, when they do (REDIS_URL on a server). */
  redisUrl?: string | undefined;
  /** A journaled transaction unmined this long makes the `relayer` check down: the backlog is stuck. */
  stuckAfterMs: number;
  now: () => number;
  /** The HSM token holding the relayer's keys, when KEY_CUSTODY=pkcs11: the `custody` check. */
  custody?: { probe(): Promise<void> } | undefined;
}

export function composeObservability(deps: ObservabilityDeps): { readiness: Readiness; close(): Promise<void> } {
  const readiness = createReadiness({ timeoutMs: probeTimeoutMs });
  readiness.add('store', () => sql`select 1`.execute(deps.store.db));
  // SQLite writes into DATA_DIR: a full disk refuses every write (store.full) until there is room.
  if (deps.store.dialect === 'sqlite') readiness.add('disk', sqliteDiskProbe(deps.store.db));
  // A client of its own per node, without retries: the platform's clients retry, which a probe must not.
  // Its calls count in vixpay_node_rpc_calls_total too: a provider bills them all the same.
  const countCall = (network: NetworkName, method: string) => deps.metrics.nodeRpcCalls.inc({ network, method });
  // A network of several endpoints (RPC_URLS_<NETWORK>) is up when any of them answers.
  const probeClientsOf = (network: NetworkName) => deps.chains[network].urls.map((url) => createPublicClient({
    transport: http(url, { timeout: probeTimeoutMs, retryCount: 0, ...countingRpcCalls(network, countCall) }),
  }));
  const endpointProbes = Object.fromEntries(networkNames.map((network) => [network, probeClientsOf(network)])) as Record<NetworkName, Array<ReturnType<typeof createPublicClient>>>;
  const probeClients = Object.fromEntries(networkNames.map((network) => [network, endpointProbes[network][0]])) as Record<NetworkName, ReturnType<typeof createPublicClient>>;
  // A raw eth_blockNumber: viem's getBlockNumber would hand a probe the pending promise of the previous one.
  for (const network of networkNames) {
    readiness.add(`chain:${network}`, () => Promise.any(endpointProbes[network].map((client) => client.request({ method: 'eth_blockNumber' })))
      .catch((error: unknown) => { throw error instanceof AggregateError ? error.errors[0] : error; }));
  }
  // Each endpoint of a node we do not run, as the platform's calls left it (no call made to tell).
  readiness.detail('endpoints', () => Object.fromEntries(networkNames.filter((network) => !deps.chains[network].managed).map((network) => [
    network, deps.chains[network].endpoints().map(({ index, host, status, outUntil, calls, throttled, failed, lastError }) => ({
      endpoint: index, host, status, calls, throttled, failed,
      ...(status !== 'up' && { asideForSeconds: Math.max(0, Math.ceil((outUntil - Date.now()) / 1000)), ...(lastError && { lastError }) }),
    })),
  ])));
  readiness.add('ipfs', () => deps.ipfs.id());
  // Token removed, library gone, PIN refused: nothing can be signed until it is back (it reconnects by itself).
  const { custody } = deps;
  if (custody) readiness.add('custody', () => custody.probe());
  // A lane stuck behind a transaction the chain does not mine (a nonce gap, a fee far below the base
  // fee, a node that dropped it) holds every later transfer of that lane.
  readiness.add('relayer', async () => {
    const now = deps.now();
    const stuck = await findStuckBacklog(deps.store.db, now - deps.stuckAfterMs);
    if (stuck.length > 0) {
      throw new Error(stuck.map(({ network, count, oldest }) =>
        `${count} transaction(s) on ${network} unmined for over ${Math.round(deps.stuckAfterMs / 1000)} s (oldest ${Math.round((now - oldest) / 1000)} s)`).join('; '));
    }
  });

  let closeRedis = async () => undefined as void;
  if (deps.redisUrl) {
    const redis = redisProbe(deps.redisUrl, deps.logger);
    readiness.add('redis', redis.ping);
    closeRedis = redis.close;
  }

  let gas: { at: number; balances: Promise<Array<Record<string, bigint>>> } | undefined;
  /** Every lane's balance per network (lane 0 first), read at most every `gasBalanceCacheMs`. */
  const laneBalances = () => {
    if (!gas || performance.now() - gas.at > gasBalanceCacheMs) {
      gas = { at: performance.now(), balances: Promise.all(deps.relayer.lanes.map((lane) => readGasBalances(probeClients, lane))) };
    }
    return gas.balances;
  };
  deps.metrics.readFrom({
    journalBacklog: () => countJournalBacklog(deps.store.db),
    relayerGasBalance: async () => inEther((await laneBalances())[0] ?? {}),
    relayerLanes: async () => {
      const [balances, pending] = await Promise.all([laneBalances(), countPendingByRelayer(deps.store.db)]);
      return networkNames.flatMap((network) => deps.relayer.lanes.map((address, i) => {
        const wei = balances[i]?.[network];
        return {
          network, lane: String(i), gasEther: wei === undefined ? undefined : Number(formatEther(wei)),
          gasLow: wei === undefined ? undefined : wei < minimumGasBalance, pending: pending[network]?.[address] ?? 0,
        };
      }));
    },
    settlementQueue: () => deps.relayer.settlementQueue(),
  });
  // A lane low on gas: said in /readyz (and vixpay_relayer_lane_gas_low), never making it not ready.
  readiness.warn('gas', async () => {
    const balances = await laneBalances();
    const low = networkNames.flatMap((network) => deps.relayer.lanes.flatMap((address, lane) => {
      const wei = balances[lane]?.[network];
      return wei !== undefined && wei < minimumGasBalance ? [`${network} lane ${lane} (${address}) ${formatEther(wei)}`] : [];
    }));
    if (low.length === 0) return undefined;
    return `relayer gas under ${formatEther(minimumGasBalance)}: ${low.join('; ')}; fund with \`vixpay lanes fund --network NAME --amount X\``;
  });
  return { readiness, close: () => closeRedis() };
}

/** Wei per network in ether, for a gauge. */
const inEther = (wei: Record<string, bigint>) => Object.fromEntries(Object.entries(wei).map(([network, value]) => [network, Number(formatEther(value))]));

/** Every network's balance that answered in time; a network that did not is left out of the scrape. */
async function readGasBalances(clients: Record<NetworkName, ReturnType<typeof createPublicClient>>, address: `0x${string}`) {
  const settled = await Promise.allSettled(networkNames.map(async (network) => [network, await clients[network].getBalance({ address })] as const));
  return Object.fromEntries(settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : [])));
}

/**
 * A connection of its own to the pairing desk's Redis, only to be pinged: it reconnects in the
 * background, and while it is not connected the probe answers down at once (no offline queue).
 */
function redisProbe(url: string, logger: Logger) {
  const client = createClient({
    url, disableOfflineQueue: true,
    socket: { connectTimeout: probeTimeoutMs, reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 2000) },
  });
  let reported = false;
  client.on('error', (err: unknown) => {
    if (!reported) logger.warn({ err, component: 'readiness' }, 'Redis readiness connection failed; retrying');
    reported = true;
  });
  client.on('ready', () => { reported = false; });
  client.connect().catch(() => undefined);
  return {
    ping: async () => {
      if (!client.isReady) throw new Error('not connected');
      await client.ping();
    },
    close: async () => { client.destroy(); },
  };
}

/** The wallet with every transfer timed into `vixpay_transfer_duration_seconds`, by outcome. */
export function withTransferMetrics(wallet: WalletService, metrics: Metrics): WalletService {
  const timed = (operation: 'transfer' | 'custody', network: NetworkName, run: () => Promise<TransferOutcome>) => {
    const end = metrics.transferDuration.startTimer({ network, operation });
    return run().then((outcome) => {
      end({ outcome: outcome.status });
      return outcome;
    });
  };
  return {
    ...wallet,
    transfer: (network, params) => timed('transfer', network, () => wallet.transfer(network, params)),
    transferFromCustody: (network, params) => timed('custody', network, () => wallet.transferFromCustody(network, params)),
  };
}

/**
 * The relayer's mined transactions into the cost metrics: gas used and fees paid per network, the
 * transfers each settlement transaction executed, and how many settlement transactions each block
 * held (counted per block, observed once a later block's transaction is recorded).
 */
export function recordMinedCost(metrics: Metrics): (network: NetworkName, mined: MinedCost) => void {
  const perBlock = new Map<NetworkName, Map<bigint, number>>();
  return (network, mined) => {
    metrics.relayerGasUsed.inc({ network }, Number(mined.gasUsed));
    metrics.relayerFeesPaid.inc({ network }, Number(formatEther(mined.feeWei + mined.l1FeeWei + mined.operatorFeeWei)));
    const purpose = mined.transfers > 0 ? 'settlement' : 'other';
    for (const [part, wei] of [['execution', mined.feeWei], ['l1_data', mined.l1FeeWei], ['operator', mined.operatorFeeWei]] as const) {
      metrics.relayerFeeParts.inc({ network, part, purpose }, Number(formatEther(wei)));
    }
    if (mined.transfers === 0) return;
    const parts = { execution: mined.feeWei, l1Data: mined.l1FeeWei, operator: mined.operatorFeeWei };
    for (const [per, fees] of [['transaction', feePartsPer(parts, 1, '')], ['transfer', feePartsPer(parts, mined.transfers, '')]] as const) {
      for (const [part, fee] of [['execution', fees.execution], ['l1_data', fees.l1Data], ['operator', fees.operator], ['total', fees.total]] as const) {
        metrics.settlementLastFee.set({ network, part, per }, Number(fee.wei));
      }
    }
    metrics.settlementTransfersPerTransaction.observe({ network }, mined.transfers);
    const blocks = perBlock.get(network) ?? new Map<bigint, number>();
    perBlock.set(network, blocks);
    blocks.set(mined.blockNumber, (blocks.get(mined.blockNumber) ?? 0) + 1);
    for (const [block, count] of blocks) {
      if (block >= mined.blockNumber) continue;
      metrics.settlementTransactionsPerBlock.observe({ network }, count);
      blocks.delete(block);
    }
  };
}
