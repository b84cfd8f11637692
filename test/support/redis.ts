import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { createClient } from 'redis';
import { skipWithout } from './parts.ts';
import { freePort } from './server-process.ts';
import { waitFor } from './wait-for.ts';

/** The Redis the multi-instance tests use (also CI's). */
export const testRedisUrl = 'redis://127.0.0.1:6379';

/** Whether a Redis answers PING at 127.0.0.1:6379 (within a second). */
export function redisAnswers(): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port: 6379 });
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(1000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('connect', () => socket.write('PING\r\n'));
    socket.on('data', (data) => done(data.toString().startsWith('+PONG')));
  });
}

/**
 * The `skip` option of the tests that need this Redis: false when it answers; when it does not, why
 * (or a failure where Redis is required: VIXPAY_REQUIRE, CI; see parts.ts).
 */
export async function redisSkip(): Promise<string | false> {
  return skipWithout('redis', !(await redisAnswers()) && 'no Redis answers at 127.0.0.1:6379');
}

/** A key prefix of its own for one test run. */
export const uniquePrefix = (name: string) => `vixpay-test:${name}:${randomUUID()}`;

/** Deletes every key under `prefix` (a test run's leftovers). */
export async function deleteKeys(prefix: string): Promise<number> {
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    let deleted = 0;
    for await (const keys of client.scanIterator({ MATCH: `${prefix}:*`, COUNT: 100 })) {
      if (keys.length > 0) deleted += await client.del(keys);
    }
    return deleted;
  } finally {
    await client.close();
  }
}

/** Keys left under `prefix`. */
export async function keysUnder(prefix: string): Promise<string[]> {
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    return await client.keys(`${prefix}:*`);
  } finally {
    await client.close();
  }
}

/** A redis-server of a test's own, on a free port, that the test stops and starts (never the shared one at 6379). */
export interface PrivateRedis {
  url: string;
  /** Starts it (again: empty, as a Redis without persistence comes back, unless it stopped keeping its data) and waits until it answers PING. */
  start(): Promise<void>;
  /** Kills it (-9) and waits for its exit; `keepData`: a clean SHUTDOWN SAVE instead, so the next start loads every key. */
  stop(options?: { keepData?: boolean }): Promise<void>;
  /** Freezes it (SIGSTOP): connections stay open, nothing is answered, as a hung Redis. */
  freeze(): void;
  /** Lets a frozen one go on (SIGCONT). */
  thaw(): void;
}

/** The `skip` option of a test that starts a Redis of its own: false when `redis-server` runs. */
export async function privateRedisSkip(): Promise<string | false> {
  const runs = await new Promise<boolean>((resolve) => {
    const child = spawn('redis-server', ['--version'], { stdio: 'ignore' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
  return skipWithout('redis', !runs && 'no redis-server binary to start a Redis of the test\'s own');
}

/** Starts a private redis-server on a free port (see PrivateRedis); `stop` it when the test ends. */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-redis-'));
  let child: ChildProcess | undefined;
  const answers = async () => {
    const client = createClient({ url, socket: { reconnectStrategy: false, connectTimeout: 500 } });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.ping()) === 'PONG';
    } catch {
      return false;
    } finally {
      if (client.isOpen) client.destroy();
    }
  };
  const redis: PrivateRedis = {
    url,
    async start() {
      if (child && child.exitCode === null && child.signalCode === null) return;
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
      await waitFor(answers, { timeoutMs: 10_000, intervalMs: 50, message: `the private redis-server answers on port ${port}` });
    },
    async stop(options = {}) {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      if (options.keepData) {
        const client = createClient({ url, socket: { reconnectStrategy: false } });
        client.on('error', () => undefined);
        await client.connect();
        await client.sendCommand(['SHUTDOWN', 'SAVE']).catch(() => undefined);
        if (client.isOpen) client.destroy();
      } else {
        child.kill('SIGKILL');
      }
      await exited;
      if (!options.keepData) rmSync(path.join(dir, 'dump.rdb'), { force: true });
    },
    freeze() { child?.kill('SIGSTOP'); },
    thaw() { child?.kill('SIGCONT'); },
  };
  await redis.start();
  return redis;
}
