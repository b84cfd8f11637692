import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { createTestClient, http, parseEther } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { startChains, type ChainSupervisor } from '../../src/chain/chain-supervisor.ts';
import { loadRelayerLanes } from '../../src/chain/platform-account.ts';
import { composePlatform, type Platform } from '../../src/compose/platform.ts';
import { loadConfig } from '../../src/config/config.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { anvilChainIds, networkNames } from '../../src/shared/networks.ts';
import { createFacilitatorKeyRepository } from '../../src/store/facilitator-key-repository.ts';
import { createMerchantRepository } from '../../src/store/merchant-repository.ts';
import { createWebhookRepository } from '../../src/store/webhook-repository.ts';
import { addWebhookEndpoint } from '../../src/webhooks/webhook-endpoints.ts';
import { addFacilitatorKey } from '../../src/x402/facilitator-keys.ts';
import { startExternalNode } from '../support/external-node.ts';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.ts';
import type { Endpoint } from '../support/fleet-operations.ts';
import { paymentsClient } from '../support/payments.ts';
import { startPrivateRedis, type PrivateRedis } from '../support/redis.ts';
import { freePort, startServerProcess, type ServerProcess } from '../support/server-process.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { startTcpProxy, type LinkMode, type TcpProxy } from './tcp-proxy.ts';

/**
 * The chaos fleet: three `vixpay serve` processes (A, B, C) on a PostgreSQL server of the run's own
 * (private-postgres.ts: the nemesis restarts it; the shared one is never touched), one redis-server
 * of the run's own (stopped and started again by the nemesis; the shared Redis is never touched) and
 * one external anvil for the payment network (the other three networks on anvils run here, shared by
 * the three). Each instance's DATA_DIR is a small tmpfs of its own where mounting is allowed (the
 * nemesis fills it with a ballast file). Every
 * instance reaches PostgreSQL, Redis and the payment network's node through a TCP proxy of its own
 * (tcp-proxy.ts), so that one instance's link can be cut, delayed or partitioned. Beside them an
 * operator platform attached directly (no proxy) sets up users, stores and tokens and reads.
 */
export const names = ['A', 'B', 'C'] as const;
export type LinkName = 'pg' | 'redis' | 'node';

export interface FleetInstance {
  name: string;
  env: Record<string, string>;
  server?: ServerProcess;
  state: 'up' | 'paused' | 'down' | 'starting';
  /** A restart under way (after a kill). */
  restarting?: Promise<void>;
  endpoint: Endpoint;
  links: Record<LinkName, TcpProxy>;
  /** Outputs of earlier processes of this instance (before a kill). */
  earlierOutput: string[];
}

/** A store: its POS API key, its settlement account, and a facilitator key of its own (x402 settles paid into its account). */
export interface Store { tid: string; apiKey: string; settlementAddress: string; facilitatorKey: string }

export interface ChaosFleet {
  operator: Platform;
  node: AnvilProcess;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  receiver: WebhookReceiver;
  instances: FleetInstance[];
  stores: Store[];
  /** The receiving account of REST pay (PAY_RECEIVER_ADDRESS): nobody else pays it. */
  payReceiver: string;
  setMining(family: 'interval' | 'automine'): Promise<void>;
  kill(i: number): void;
  restart(i: number): Promise<void>;
  pause(i: number): void;
  resume(i: number): void;
  /** pg_terminate_backend of this run's instances' PostgreSQL backends (all, or instance `i`'s). */
  terminatePostgres(i?: number): Promise<number>;
  setLink(i: number, link: LinkName, mode: LinkMode): void;
  /** PostgreSQL stopped (fast: every connection cut) for `downMs`, then started again; false when a restart is already under way. */
  restartPostgres(downMs: number): Promise<boolean>;
  /** The redis-server killed (-9: its keys lost, as it keeps none) for `downMs`, then started again on the same port. */
  redisDown(downMs: number): Promise<void>;
  /**
   * The node loses the blocks of the next `forMs`: a snapshot now, reverted to then (what a provider
   * failing over to a lagging node or a deep reorg does); false when a rollback is already under way.
   */
  rollback(forMs: number): Promise<boolean>;
  /** Instance `i`'s DATA_DIR filled to its last byte for `forMs`, then freed; why not, when it cannot be (no tmpfs). */
  fillDisk(i: number, forMs: number): Promise<string | undefined>;
  /** Every link passing, every instance running and ready. */
  heal(): Promise<void>;
  stop(): Promise<void>;
}

const anvilControls = (url: string) => createTestClient({ mode: 'anvil', transport: http(url) });

/**
 * The node behind `url` loses the blocks of the next `forMs` (`ChaosFleet.rollback`). anvil's revert
 * also winds its clock back by the span, and every block after would carry a time that far behind the
 * wall clock for the rest of the run (79 s after a few rollbacks); no network does that: a node that
 * went back is at the network's tip again within moments, and the tip's time is the wall clock's. So
 * the clock is set to now after the revert.
 */
export async function loseBlocks(url: string, forMs: number): Promise<void> {
  const anvil = anvilControls(url);
  const id = await anvil.snapshot();
  await sleep(forMs);
  await anvil.revert({ id });
  await anvil.request({ method: 'anvil_setTime', params: [Math.floor(Date.now() / 1000)] } as never);
}

/** The fleet's payment windows and sweep interval, which the checker's pending allowance derives from. */
export const fleetWindows = { pairingSeconds: 10, idleSeconds: 20, sweepSeconds: 2 };

export async function startChaosFleet(log: (line: string) => void): Promise<ChaosFleet> {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-chaos-'));
    dirs.push(dir);
    return dir;
  };
  const { node, relayerKey } = await startExternalNode();
  const chains: ChainSupervisor = await startChains({
    dataDir: tempDir(), rpcUrls: { ethereum: [node.url] }, chainIds: { ...anvilChainIds, ethereum: foundry.id }, logger: createLogger('silent'), mode: 'own', checkpointIntervalMs: 600_000,
  });
  // Every lane of the relayer needs gas on the networks run here too (the external node's are funded).
  const lanes = loadRelayerLanes({ privateKey: relayerKey, dataDir: tempDir(), vault: undefined as never, count: loadConfig({}).relayerLanes });
  for (const network of networkNames.filter((n) => n !== 'ethereum')) {
    for (const lane of lanes) await anvilControls(chains.endpoints[network].url).setBalance({ address: lane.address, value: parseEther('1000') });
  }
  const postgres = await startPrivatePostgres();
  const redis = await startPrivateRedis();
  // Each instance's DATA_DIR on a tmpfs of its own (32 MiB), so that one can be filled without
  // filling the machine's disk; where mounting is refused (no root, no CAP_SYS_ADMIN) the full-disk
  // fault is skipped with the reason.
  const mounts: string[] = [];
  let diskRefused: string | undefined;
  const dataDir = () => {
    const dir = tempDir();
    if (diskRefused === undefined) {
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=32m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
        mounts.push(dir);
      } catch (error) {
        diskRefused = `mounting a tmpfs is refused here (needs root or CAP_SYS_ADMIN): ${(error as Error).message.split('\n')[0]}`;
      }
    }
    return dir;
  };
  const receiver = await startWebhookReceiver();
  const payReceiver = privateKeyToAccount(generatePrivateKey()).address;
  const pgUrl = new URL(postgres.url);
  const nodeUrl = new URL(node.url);
  const redisUrl = new URL(redis.url);
  const common = {
    MASTER_KEY: randomBytes(32).toString('hex'), RELAYER_PRIVATE_KEY: relayerKey, IPFS_BLOCKSTORE: 'postgres', PAY_RECEIVER_ADDRESS: payReceiver,
    ...Object.fromEntries(networkNames.filter((n) => n !== 'ethereum').map((n) => [`RPC_URL_${n.toUpperCase()}`, chains.endpoints[n].url])),
    ...Object.fromEntries(networkNames.map((n) => [`CHAIN_ID_${n.toUpperCase()}`, String(n === 'ethereum' ? foundry.id : anvilChainIds[n])])),
    CHAIN_POLL_MS: '200', RECEIPT_TIMEOUT_SECONDS: '20', AUTHORIZATION_TTL_SECONDS: '30', STALE_OPERATION_SECONDS: '5', SWEEP_INTERVAL_SECONDS: String(fleetWindows.sweepSeconds),
    REPRICE_AFTER_SECONDS: '10', PAYMENT_PAIRING_WINDOW_SECONDS: String(fleetWindows.pairingSeconds), PAYMENT_IDLE_TIMEOUT_SECONDS: String(fleetWindows.idleSeconds), GRPC_MAX_STREAMS_PER_CLIENT: '100',
    WEBHOOK_RETRY_INITIAL_SECONDS: '1', WEBHOOK_RETRY_MAX_SECONDS: '5', WEBHOOK_TIMEOUT_SECONDS: '5', SHUTDOWN_TIMEOUT_SECONDS: '5', LOG_LEVEL: 'warn',
  };

  const instances: FleetInstance[] = [];
  for (const [i, name] of names.entries()) {
    const links = {
      pg: await startTcpProxy({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) }),
      redis: await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port) }),
      node: await startTcpProxy({ host: nodeUrl.hostname, port: Number(nodeUrl.port) }),
    };
    const databaseUrl = new URL(postgres.url);
    databaseUrl.port = String(links.pg.port);
    // Its backends carry the instance's name: the nemesis terminates these (not the operator's).
    databaseUrl.searchParams.set('application_name', `vixpay_chaos_i${i}`);
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    const env = {
      ...common, DATA_DIR: dataDir(), DATABASE_URL: databaseUrl.toString(), REDIS_URL: `redis://127.0.0.1:${links.redis.port}`,
      RPC_URL_ETHEREUM: `http://127.0.0.1:${links.node.port}`, HTTP_PORT: String(httpPort), GRPC_PORT: String(grpcPort), GRPC_HOST: '127.0.0.1',
    };
    instances.push({
      name, env, state: 'down', links, earlierOutput: [],
      endpoint: { name, baseUrl: `http://127.0.0.1:${httpPort}`, client: paymentsClient(grpcPort) },
    });
  }
  const startInstance = async (instance: FleetInstance) => {
    instance.state = 'starting';
    if (instance.server) instance.earlierOutput.push(instance.server.output().slice(-4000));
    try {
      instance.server = await startServerProcess(instance.env, 240_000);
    } catch (error) {
      // Left down: the heal starts it again.
      instance.state = 'down';
      throw error;
    }
    instance.state = 'up';
  };
  // The first start deploys the contracts: one instance first, the others beside each other after.
  await startInstance(instances[0]!);
  await Promise.all(instances.slice(1).map(startInstance));
  log(`fleet: ${instances.map((x) => `${x.name} ${x.endpoint.baseUrl} grpc ${x.env.GRPC_PORT}`).join(', ')}; node ${node.url}; postgres ${postgres.url}; redis ${redis.url}${diskRefused ? `; full disk skipped: ${diskRefused}` : ''}`);

  const operator = await composePlatform(loadConfig({ ...common, DATA_DIR: tempDir(), DATABASE_URL: postgres.url, RPC_URL_ETHEREUM: node.url, LOG_LEVEL: 'silent' }),
    createLogger('silent'), { chainMode: 'attach', pairing: 'in-process', finishJournal: false });
  await operator.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  const anvil = anvilControls(node.url);
  await anvil.setAutomine(true);
  const stores: Store[] = [];
  for (const i of [1, 2, 3]) {
    const store = await operator.payments.addStore({ tid: `T-CH${i}${randomBytes(2).toString('hex')}`, name: `Chaos Cafe ${i}` });
    await operator.wallet.mint('ethereum', { to: store.settlementAddress, amount: '100000' });
    await addWebhookEndpoint({
      webhooks: createWebhookRepository(operator.store.db, operator.store.dialect), merchants: createMerchantRepository(operator.store.db),
      vault: operator.vault, clock: operator.clock,
    }, { tid: store.tid, url: receiver.url, events: [], allowPrivate: true });
    const { key } = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(operator.store.db), clock: Date.now },
      { name: `chaos ${store.tid}`, tid: store.tid, ratePerSecond: 1000 });
    stores.push({ ...store, facilitatorKey: key });
  }

  // A run that dies (an uncaught error) leaves nothing behind: its processes killed, its mounts gone.
  const leftovers = () => {
    const kill = (pid: number | undefined) => { try { if (pid && pid > 0) process.kill(pid, 'SIGKILL'); } catch { /* gone already */ } };
    for (const instance of instances) kill(instance.server?.child.pid);
    for (const network of networkNames) kill(chains.nodePid(network));
    kill(node.pid);
    void redis.stop();
    try { postgres.stop(); } catch { /* stopped already */ }
    for (const dir of mounts) { try { execFileSync('umount', ['-l', dir]); } catch { /* unmounted already */ } }
  };
  process.once('exit', leftovers);
  let postgresRestarting: Promise<void> | undefined;
  let rollingBack = false;
  const ballasts = new Set<string>();
  const fleet: ChaosFleet = {
    operator, node, postgres, redis, receiver, instances, stores, payReceiver,
    async setMining(family) {
      if (family === 'automine') {
        await anvil.setIntervalMining({ interval: 0 });
        await anvil.setAutomine(true);
      } else {
        await anvil.setAutomine(false);
        await anvil.setIntervalMining({ interval: 1 });
      }
    },
    kill(i) {
      const instance = instances[i]!;
      if (instance.state !== 'up' && instance.state !== 'paused') return;
      instance.server!.child.kill('SIGKILL');
      instance.state = 'down';
    },
    restart(i) {
      const instance = instances[i]!;
      if (instance.restarting) return instance.restarting;
      if (instance.state !== 'down') return Promise.resolve();
      const restarting = (async () => {
        const { child } = instance.server!;
        if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
        await startInstance(instance);
      })().finally(() => { if (instance.restarting === restarting) instance.restarting = undefined; });
      instance.restarting = restarting;
      return restarting;
    },
    pause(i) {
      const instance = instances[i]!;
      if (instance.state !== 'up') return;
      instance.server!.child.kill('SIGSTOP');
      instance.state = 'paused';
    },
    resume(i) {
      const instance = instances[i]!;
      if (instance.state !== 'paused') return;
      instance.server!.child.kill('SIGCONT');
      instance.state = 'up';
    },
    async terminatePostgres(i) {
      const admin = new pg.Client({ connectionString: postgres.url });
      // A restart of the server while it asks ends this connection too: an error to answer, not an uncaught event.
      admin.on('error', () => undefined);
      await admin.connect();
      try {
        const names = i === undefined ? instances.map((_, n) => `vixpay_chaos_i${n}`) : [`vixpay_chaos_i${i}`];
        const result = await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ANY($1) AND pid <> pg_backend_pid()', [names]);
        return result.rowCount ?? 0;
      } finally {
        await admin.end();
      }
    },
    setLink(i, link, mode) { instances[i]!.links[link].set(mode); },
    async restartPostgres(downMs) {
      if (postgresRestarting) return false;
      postgresRestarting = postgres.restart(downMs).finally(() => { postgresRestarting = undefined; });
      await postgresRestarting;
      return true;
    },
    async redisDown(downMs) {
      await redis.stop();
      await sleep(downMs);
      await redis.start();
    },
    async rollback(forMs) {
      if (rollingBack) return false;
      rollingBack = true;
      try {
        await loseBlocks(node.url, forMs);
        return true;
      } finally {
        rollingBack = false;
      }
    },
    async fillDisk(i, forMs) {
      const dir = instances[i]!.env.DATA_DIR!;
      if (!mounts.includes(dir)) return diskRefused ?? 'DATA_DIR is not a tmpfs of its own';
      const ballast = path.join(dir, 'ballast');
      if (ballasts.has(ballast)) return 'already full';
      ballasts.add(ballast);
      try {
        fillTo(ballast);
        await sleep(forMs);
      } finally {
        rmSync(ballast, { force: true });
        ballasts.delete(ballast);
      }
      return undefined;
    },
    async heal() {
      // A part the nemesis stopped and did not start again (a fault cut short): started.
      await postgresRestarting?.catch(() => undefined);
      await redis.start();
      for (const [i, instance] of instances.entries()) {
        for (const link of Object.values(instance.links)) link.set({ kind: 'pass' });
        fleet.resume(i);
      }
      // A start can fail on a link that was cut while it started (a node that did not answer): again, up to three times.
      await Promise.all(instances.map(async (_, i) => {
        for (let attempt = 1; ; attempt++) {
          try {
            await fleet.restart(i);
            return;
          } catch (error) {
            if (attempt === 3) throw error;
          }
        }
      }));
      const deadline = Date.now() + 120_000;
      for (const instance of instances) {
        for (;;) {
          const ready = await fetch(`${instance.endpoint.baseUrl}/readyz`, { signal: AbortSignal.timeout(5000) }).then((r) => r.ok, () => false);
          if (ready) break;
          if (Date.now() > deadline) throw new Error(`${instance.name} is not ready 120 s after the heal`);
          await sleep(500);
        }
      }
    },
    async stop() {
      process.off('exit', leftovers);
      for (const instance of instances) {
        instance.endpoint.client.close();
        if (instance.state === 'paused') instance.server?.child.kill('SIGCONT');
        const child = instance.server?.child;
        if (child && child.exitCode === null && child.signalCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGKILL');
          await exited;
        }
        for (const link of Object.values(instance.links)) await link.close();
      }
      await operator.stop().catch(() => undefined);
      await chains.stop();
      await node.stop();
      await redis.stop();
      await receiver.close();
      postgres.stop();
      for (const dir of mounts) execFileSync('umount', ['-l', dir]);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
  return fleet;
}

/** Fills the file system of `ballast` to its last byte: 1 MiB chunks, then smaller ones, until each is refused. */
function fillTo(ballast: string): void {
  const fd = openSync(ballast, 'w');
  try {
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      const bytes = Buffer.alloc(chunk, 1);
      for (;;) {
        try {
          writeSync(fd, bytes);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
