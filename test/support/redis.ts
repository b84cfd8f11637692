import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { createClient } from 'redis';
import { skipWithout } from './parts.ts';

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
