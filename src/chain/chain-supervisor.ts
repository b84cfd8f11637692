import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '#shared/logger.ts';
import { errorSummary, stripLongHex } from '#shared/redact.ts';
import { startAnvil } from './anvil-process.ts';
import { startChainCheckpoints, type ChainCheckpoints } from './chain-checkpoint.ts';
import { anvilChainIds, networkNames, type NetworkName } from '#shared/networks.ts';

export interface ChainEndpoint {
  network: NetworkName;
  /** The preferred endpoint (the only one of a node we run). */
  url: string;
  /** Every endpoint, the preferred first (`RPC_URLS_<NETWORK>`); absent: `url` alone. */
  urls?: readonly string[];
  /** The chain id the endpoints must answer (a node we do not run); absent: whatever they answer. */
  chainId?: number;
  /** True when we run the node (anvil) ourselves; false for a configured RPC URL. */
  managed: boolean;
  /** The node's WebSocket for pushed heads (`WS_URL_<NETWORK>`); an anvil we run serves it on `url`'s port. */
  wsUrl?: string;
}

export interface ChainSupervisor {
  endpoints: Readonly<Record<NetworkName, ChainEndpoint>>;
  /** The process id of the anvil we run for `network` (none for a configured RPC URL). */
  nodePid(network: NetworkName): number | undefined;
  stop(): Promise<void>;
}

export interface ChainSupervisorOptions {
  dataDir: string;
  /** A network's endpoints, the preferred first; a network with none runs on an anvil of ours. */
  rpcUrls: Readonly<Partial<Record<NetworkName, readonly string[]>>>;
  /** The chain id each network's endpoints must answer (`config.chainIds`); our anvils have their own. */
  chainIds: Readonly<Record<NetworkName, number>>;
  /** A network's WebSocket for pushed heads (`config.wsUrls`), beside its endpoints. */
  wsUrls?: Readonly<Partial<Record<NetworkName, string>>>;
  logger: Logger;
  /**
   * `own` (the server): an anvil still running from an earlier process (one killed with -9)
   * is adopted and stopped with ours at shutdown. `attach` (a CLI command beside a running
   * server): a running anvil is used and left running; one started here is stopped at the end.
   */
  mode?: 'own' | 'attach';
  /** The least time between two checkpoints of a managed anvil's state (chain-checkpoint.ts). */
  checkpointIntervalMs: number;
}

interface ManagedChain {
  network: NetworkName;
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Gives every network an endpoint: the configured RPC URL, or an anvil bound to loopback with
 * its state checkpointed into `dataDir/chains/<network>/state.json` (atomically: rarely, while blocks
 * are mined, and at a clean stop) and reloaded on the next start.
 */
export async function startChains(options: ChainSupervisorOptions): Promise<ChainSupervisor> {
  const started: ManagedChain[] = [];
  const entries = await Promise.all(
    networkNames.map(async (network): Promise<[NetworkName, ChainEndpoint]> => {
      const urls = options.rpcUrls[network];
      const wsUrl = options.wsUrls?.[network];
      if (urls?.[0]) return [network, { network, url: urls[0], urls, chainId: options.chainIds[network], managed: false, ...(wsUrl !== undefined && { wsUrl }) }];
      const chain = await runManagedAnvil(network, options);
      started.push(chain);
      return [network, { network, url: chain.url, managed: true }];
    }),
  ).catch(async (error: unknown) => {
    await Promise.all(started.map((c) => c.stop()));
    throw error;
  });
  const endpoints = Object.fromEntries(entries) as Record<NetworkName, ChainEndpoint>;
  return {
    endpoints,
    nodePid: (network) => started.find((c) => c.network === network)?.pid,
    stop: async () => {
      await Promise.all(started.map((c) => c.stop()));
    },
  };
}

function chainFile(dataDir: string, network: NetworkName, name: string): string {
  return path.join(dataDir, 'chains', network, name);
}

async function runManagedAnvil(network: NetworkName, options: ChainSupervisorOptions): Promise<ManagedChain> {
  const log = options.logger.child({ network, component: 'anvil' });
  const pidFile = chainFile(options.dataDir, network, 'anvil.pid');
  const urlFile = chainFile(options.dataDir, network, 'anvil.url');
  mkdirSync(path.dirname(pidFile), { recursive: true, mode: 0o700 });

  const statePath = chainFile(options.dataDir, network, 'state.json');
  const checkpointsOf = (url: string): ChainCheckpoints => startChainCheckpoints({
    url, statePath, minIntervalMs: options.checkpointIntervalMs,
    onCheckpoint: (c) => log.debug({ block: c.block, bytes: c.bytes, ms: Math.round(c.ms) }, 'chain state checkpointed'),
    onError: (err) => log.warn({ reason: errorSummary(err) }, 'chain state checkpoint failed'),
  });

  const running = runningAnvil(pidFile, urlFile);
  if (running) {
    const own = (options.mode ?? 'own') === 'own';
    log.info({ pid: running.pid, url: running.url }, own ? 'adopting the anvil left running by an earlier process' : 'using the running anvil');
    if (!own) return { network, url: running.url, pid: running.pid, stop: async () => {} };
    const checkpoints = checkpointsOf(running.url);
    await checkpoints.ready;
    return {
      network, url: running.url, pid: running.pid,
      stop: async () => {
        await checkpoints.stop();
        await stopPid(running.pid, [pidFile, urlFile]);
      },
    };
  }
  const anvil = await startAnvil({
    chainId: anvilChainIds[network],
    loadStatePath: statePath,
    // The node prints revert data and, at some levels, calldata: long hex never reaches a log line.
    onOutput: (line) => log.trace(stripLongHex(line)),
    // Not in the platform's process group: a signal to the group (Ctrl-C, systemd) reaches the
    // platform alone, which stops anvil after the last checkpoint (docs/operations.md "Stopping").
    ownSession: true,
  });
  writeFileSync(pidFile, String(anvil.pid), { mode: 0o600 });
  writeFileSync(urlFile, anvil.url, { mode: 0o600 });
  log.info({ url: anvil.url }, 'anvil started');
  const checkpoints = checkpointsOf(anvil.url);
  await checkpoints.ready.catch(async (error: unknown) => {
    await anvil.stop();
    throw error;
  });
  return {
    network, url: anvil.url, pid: anvil.pid,
    stop: async () => {
      await checkpoints.stop();
      await anvil.stop();
      rmSync(pidFile, { force: true });
      rmSync(urlFile, { force: true });
    },
  };
}

function runningAnvil(pidFile: string, urlFile: string): { pid: number; url: string } | undefined {
  if (!existsSync(pidFile) || !existsSync(urlFile)) return undefined;
  const pid = Number(readFileSync(pidFile, 'utf8'));
  const url = readFileSync(urlFile, 'utf8').trim();
  if (!Number.isInteger(pid) || pid <= 0 || !isAnvil(pid)) return undefined;
  return { pid, url };
}

async function stopPid(pid: number, files: string[]): Promise<void> {
  if (isAlive(pid)) {
    process.kill(pid, 'SIGTERM');
    for (let waited = 0; waited < 15_000 && isAlive(pid); waited += 50) await sleep(50);
    if (isAlive(pid)) process.kill(pid, 'SIGKILL');
  }
  for (const file of files) rmSync(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function isAnvil(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('anvil');
  } catch {
    return false;
  }
}
