// Memory per idle authenticated payment stream: the payment server's RSS as N DoPayment streams, each
// past START_PAY (authenticated, waiting at the pairing desk for its POS), stay open; beside the same
// number of bare HTTP/2 streams on a plain `node:http2` server carrying the same first message. Each
// server runs in a process of its own (its RSS is the figure, read after a full GC), and the streams
// come from a third process. This module is all three: the parent forks it with `--idle-streams=<role>`
// (each role imports only what it needs, so that the bare server's process holds no platform code).
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import http2 from 'node:http2';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type * as grpc from '@grpc/grpc-js';

/** Streams per JWT user: the default GRPC_MAX_STREAMS_PER_CLIENT, kept (so one user per 20 streams). */
const streamsPerUser = 20;
/** Streams per connection: the default GRPC_MAX_CONCURRENT_STREAMS_PER_CONNECTION, kept. */
const streamsPerConnection = 100;
/**
 * The one setting raised: a DoPayment app waiting for its POS is let go after PAYMENT_IDLE_TIMEOUT_SECONDS
 * (120 s by default; PAYMENT_PAIRING_WINDOW_SECONDS is the POS's wait for its app, not the app's).
 */
export const idleStreamsEnv = { PAYMENT_IDLE_TIMEOUT_SECONDS: '3600' };
const mib = (bytes: number) => Number((bytes / 2 ** 20).toFixed(1));

export interface IdleStreamsStep {
  streams: number;
  rssMiB: number;
  /** RSS growth over the server's RSS before any stream, and that per 1,000 streams. */
  growthMiB: number;
  mibPer1000: number;
  /**
   * RSS added per 1,000 streams since the step before (the first step: since before any stream):
   * the cost of the streams themselves once the server's own start-up memory no longer moves.
   */
  marginalMiBPer1000: number;
  /** V8 heap in use after a full GC, and its growth: the JavaScript objects alone. */
  heapUsedMiB: number;
  heapGrowthMiB: number;
}

export interface IdleStreamsServer {
  rssBeforeMiB: number;
  heapUsedBeforeMiB: number;
  steps: IdleStreamsStep[];
  /** Streams the server ended while they were meant to stay idle (must be 0). */
  endedEarly: number;
}

export interface IdleStreams {
  streamsPerUser: number;
  streamsPerConnection: number;
  settings: Record<string, string>;
  /**
   * Seconds each server rested before each reading (the first included): past the first-message
   * timeout, and long enough for V8 and the allocator to hand back what a burst of work took.
   */
  heldSeconds: number;
  platform: IdleStreamsServer;
  bareHttp2: IdleStreamsServer;
  /** Growth at the last step, platform / bare HTTP/2. */
  growthVsBare: number;
  /** Issue 13: 10,000 idle streams under 500 MB (10^6 bytes; 476.8 MiB). */
  target: { streams: number; maxRssMB: number };
  /** The platform's RSS at `target.streams` streams (measured at that step) is under `maxRssMB`. */
  withinTarget: boolean | undefined;
}

// --- the parent -----------------------------------------------------------------------------------

interface Child { request<T>(message: object): Promise<T>; stop(): Promise<void> }

async function forkRole(role: 'platform' | 'bare' | 'client'): Promise<Child> {
  const child: ChildProcess = fork(new URL(import.meta.url), [`--idle-streams=${role}`], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, '--expose-gc'],
  });
  const exited = once(child, 'exit');
  const [ready] = (await Promise.race([once(child, 'message'), exited.then(() => [{ error: `${role} exited at start` }])])) as [{ error?: string }];
  if (ready?.error) throw new Error(`idle streams ${role}: ${ready.error}`);
  let queue = Promise.resolve();
  return {
    request<T>(message: object): Promise<T> {
      const answer = queue.then(async () => {
        child.send(message);
        const [reply] = (await once(child, 'message')) as [{ result?: T; error?: string }];
        if (reply.error) throw new Error(`idle streams ${role}: ${reply.error}`);
        return reply.result as T;
      });
      queue = answer.then(() => undefined, () => undefined);
      return answer;
    },
    async stop() {
      if (child.exitCode !== null) return;
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Memory { rss: number; heapUsed: number; open: number }

/** Until the server counts `streams` streams past their first message (a deadline per step). */
async function untilOpen(server: Child, streams: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const { open } = await server.request<{ open: number }>({ kind: 'count' });
    if (open >= streams) return;
    if (performance.now() > deadline) throw new Error(`idle streams: ${open} of ${streams} streams open after ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function measureServer(server: Child, target: { kind: 'grpc' | 'http2'; port: number; tokens: string[] }, steps: number[], holdMs: number, log: (m: string) => void): Promise<IdleStreamsServer> {
  const client = await forkRole('client');
  try {
    const rest = () => new Promise((resolve) => setTimeout(resolve, holdMs));
    await rest();
    const before = await server.request<Memory>({ kind: 'memory' });
    const measured: IdleStreamsStep[] = [];
    for (const streams of steps) {
      await client.request({ kind: 'open', protocol: target.kind, port: target.port, tokens: target.tokens, total: streams });
      await untilOpen(server, streams, 120_000);
      await rest();
      const now = await server.request<Memory>({ kind: 'memory' });
      const growth = now.rss - before.rss;
      const previous = measured.at(-1) ?? { streams: 0, rssMiB: mib(before.rss) };
      measured.push({
        streams, rssMiB: mib(now.rss), growthMiB: mib(growth), mibPer1000: Number((mib(growth) / (streams / 1000)).toFixed(2)),
        marginalMiBPer1000: Number(((mib(now.rss) - previous.rssMiB) / ((streams - previous.streams) / 1000)).toFixed(2)),
        heapUsedMiB: mib(now.heapUsed), heapGrowthMiB: mib(now.heapUsed - before.heapUsed),
      });
      log(`  ${target.kind === 'grpc' ? 'platform' : 'bare HTTP/2'}, ${streams} idle streams: RSS ${mib(now.rss)} MiB (${growth >= 0 ? '+' : ''}${mib(growth)} MiB, ${measured.at(-1)!.mibPer1000} MiB per 1,000, ${measured.at(-1)!.marginalMiBPer1000} since the step before; heap +${mib(now.heapUsed - before.heapUsed)} MiB)`);
    }
    const { ended } = await client.request<{ ended: number }>({ kind: 'ended' });
    return { rssBeforeMiB: mib(before.rss), heapUsedBeforeMiB: mib(before.heapUsed), steps: measured, endedEarly: ended };
  } finally {
    await client.stop();
  }
}

/**
 * Opens the streams step by step (cumulative counts in `steps`) against the platform's payment
 * server, then against a bare HTTP/2 server, reading each server's RSS at every step.
 */
export async function measureIdleStreams(options: { steps: number[]; holdMs: number; log: (message: string) => void }): Promise<IdleStreams> {
  const total = Math.max(...options.steps);
  const users = Math.ceil(total / streamsPerUser);
  options.log(`idle streams: platform with ${users} users (${streamsPerUser} streams each), steps ${options.steps.join(', ')}`);
  // The users are made by a platform of their own (argon2 hashes of 19 MiB each would stay in the
  // measured process's allocator); the measured server starts afresh on the same data directory.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-bench-idle-'));
  let platformResult: IdleStreamsServer;
  let tokens: string[];
  try {
    const setup = await forkRole('platform');
    try {
      tokens = (await setup.request<{ tokens: string[] }>({ kind: 'start', dataDir, users })).tokens;
    } finally {
      await setup.request({ kind: 'stop' }).catch(() => undefined);
      await setup.stop();
    }
    const platform = await forkRole('platform');
    try {
      const { port } = await platform.request<{ port: number }>({ kind: 'start', dataDir, users: 0 });
      platformResult = await measureServer(platform, { kind: 'grpc', port, tokens }, options.steps, options.holdMs, options.log);
    } finally {
      await platform.request({ kind: 'stop' }).catch(() => undefined);
      await platform.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const bare = await forkRole('bare');
  let bareResult: IdleStreamsServer;
  try {
    const { port } = await bare.request<{ port: number }>({ kind: 'start' });
    bareResult = await measureServer(bare, { kind: 'http2', port, tokens }, options.steps, options.holdMs, options.log);
  } finally {
    await bare.stop();
  }
  const last = platformResult.steps.at(-1)!;
  const target = { streams: 10_000, maxRssMB: 500 };
  const atTarget = platformResult.steps.find((s) => s.streams === target.streams);
  return {
    streamsPerUser, streamsPerConnection, settings: idleStreamsEnv, heldSeconds: Math.round(options.holdMs / 1000),
    platform: platformResult, bareHttp2: bareResult,
    growthVsBare: Number((last.growthMiB / bareResult.steps.at(-1)!.growthMiB).toFixed(2)),
    target, withinTarget: atTarget ? atTarget.rssMiB * 2 ** 20 < target.maxRssMB * 1e6 : undefined,
  };
}

// --- the children ---------------------------------------------------------------------------------

const protoFile = new URL('../proto/g00/payments/v2/payments.proto', import.meta.url).pathname;

/**
 * The process's memory at rest: a full GC, then again every second until the RSS moves by less than
 * 1 MiB between two readings (V8 and the allocator hand pages back some time after a burst), 15 s at most.
 */
async function memory(open: number): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  gc();
  let previous = process.memoryUsage.rss();
  for (let i = 0; i < 15; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    gc();
    const rss = process.memoryUsage.rss();
    const settled = Math.abs(rss - previous) < 2 ** 20;
    previous = rss;
    if (settled) break;
  }
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heapUsed, open };
}

/** The platform's payment server; its users and their JWTs. */
async function platformRole() {
  const { startBenchPlatform } = await import('./bench-platform.ts');
  const { inspectPairingDesk } = await import('../src/pairing/in-process-pairing-desk.ts');
  let bench: Awaited<ReturnType<typeof startBenchPlatform>> | undefined;
  // The parent gone without a stop: the platform's anvils are stopped before this process exits.
  process.on('disconnect', () => { void (bench?.stop() ?? Promise.resolve()).finally(() => process.exit(0)); });
  return async (message: { kind: string; users?: number; dataDir?: string }) => {
    if (message.kind === 'start') {
      bench = await startBenchPlatform({ grpc: true, env: idleStreamsEnv, dataDir: message.dataDir! });
      const { wallet, identity } = bench.platform;
      const tokens: string[] = [];
      for (let i = 0; i < message.users!; i++) {
        const { address } = await wallet.createAddress();
        const userId = `idle-${randomUUID()}`;
        await identity.users.createUser({ id: userId, password: 'correct horse battery', name: 'Idle User', walletAddress: address });
        tokens.push((await identity.jwt.issueAccessToken(userId)).token);
      }
      return { port: bench.grpcPort, tokens };
    }
    const open = bench ? inspectPairingDesk(bench.platform.desk).apps.length : 0;
    if (message.kind === 'count') return { open };
    if (message.kind === 'memory') return memory(open);
    if (message.kind === 'stop') {
      const stopping = bench;
      bench = undefined;
      return stopping?.stop();
    }
    throw new Error(`unknown ${message.kind}`);
  };
}

/** A plain node:http2 server that reads each stream's first message and keeps the stream open. */
async function bareRole() {
  let open = 0;
  const streams = new Set<http2.ServerHttp2Stream>();
  const server = http2.createServer({ settings: { maxConcurrentStreams: streamsPerConnection } });
  server.on('stream', (stream) => {
    streams.add(stream);
    stream.once('data', () => { open++; });
    stream.on('error', () => undefined);
    stream.once('close', () => streams.delete(stream));
  });
  return async (message: { kind: string }) => {
    if (message.kind === 'start') {
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      return { port: (server.address() as { port: number }).port };
    }
    if (message.kind === 'count') return { open };
    if (message.kind === 'memory') return memory(open);
    throw new Error(`unknown ${message.kind}`);
  };
}

/** Opens streams up to a total: DoPayment over gRPC with START_PAY, or the same bytes over bare HTTP/2. */
async function clientRole() {
  const grpc = await import('@grpc/grpc-js');
  const protoLoader = await import('@grpc/proto-loader');
  const { bearer, common } = await import('../test/support/payments.ts');
  const definition = protoLoader.loadSync(protoFile, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
  const Service = (grpc.loadPackageDefinition(definition) as any).g00.payments.v2.PaymentsService as grpc.ServiceClientConstructor;
  const startPay = () => ({ common: common('doPayment'), content: { state: 'START_PAY', user_uuid: randomUUID() } });
  const grpcClients: grpc.Client[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  let opened = 0;
  let ended = 0;
  return async (message: { kind: string; protocol?: 'grpc' | 'http2'; port?: number; tokens?: string[]; total?: number }) => {
    if (message.kind === 'ended') return { ended };
    if (message.kind !== 'open') throw new Error(`unknown ${message.kind}`);
    const { protocol, port, tokens, total } = message as Required<typeof message>;
    for (; opened < total; opened++) {
      const connection = Math.floor(opened / streamsPerConnection);
      if (protocol === 'http2') {
        if (!sessions[connection]) sessions[connection] = http2.connect(`http://127.0.0.1:${port}`).on('error', () => undefined);
        const stream = sessions[connection]!.request({
          ':method': 'POST', ':path': '/g00.payments.v2.PaymentsService/DoPayment', 'content-type': 'application/grpc', te: 'trailers',
          authorization: `Bearer ${tokens[Math.floor(opened / streamsPerUser)]!}`,
        }, { endStream: false });
        const body = Service.service.DoPayment!.requestSerialize(startPay());
        const frame = Buffer.alloc(5 + body.length);
        frame.writeUInt32BE(body.length, 1);
        body.copy(frame, 5);
        stream.write(frame);
        stream.on('error', () => undefined);
        stream.once('close', () => { ended++; });
      } else {
        if (!grpcClients[connection]) grpcClients[connection] = new Service(`127.0.0.1:${port}`, grpc.credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
        const call = (grpcClients[connection] as any).DoPayment(bearer(tokens[Math.floor(opened / streamsPerUser)]!)) as grpc.ClientDuplexStream<any, any>;
        call.on('data', () => undefined);
        call.on('error', () => undefined);
        call.once('status', () => { ended++; });
        call.write(startPay());
      }
    }
    return { opened };
  };
}

if (process.argv.some((arg) => arg.startsWith('--idle-streams=')) && process.send) {
  const role = process.argv.find((arg) => arg.startsWith('--idle-streams='))!.split('=')[1];
  const handle = await (role === 'platform' ? platformRole() : role === 'bare' ? bareRole() : clientRole()) as (message: any) => Promise<unknown>;
  process.on('message', (message) => {
    handle(message).then(
      (result) => process.send!({ result: result ?? null }),
      (error: unknown) => process.send!({ error: String((error as Error)?.stack ?? error) }),
    );
  });
  if (role !== 'platform') process.on('disconnect', () => process.exit(0));
  process.send('ready');
}
