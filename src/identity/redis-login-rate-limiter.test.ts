import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createClient } from 'redis';
import { deleteKeys, privateRedisSkip, redisSkip, startPrivateRedis, testRedisUrl, uniquePrefix, type PrivateRedis } from '../../test/support/redis.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { LoginRateLimitedError } from './login-rate-limiter.ts';
import { createRedisLoginRateLimiter, type RedisLoginRateLimiter } from './redis-login-rate-limiter.ts';

// The Redis throttle keeps the in-memory one's rules (login-rate-limiter.test.ts), for every
// instance at once: two limiters on one prefix stand for two instances.
const skip = await redisSkip();
const minute = 60_000;
const limited = (seconds: number) => (e: unknown) => e instanceof LoginRateLimitedError && e.retryAfterSeconds === seconds;

describe('login throttle in Redis', { skip }, () => {
  const prefixes: string[] = [];
  const opened: RedisLoginRateLimiter[] = [];
  after(async () => {
    await Promise.all(opened.map((limiter) => limiter.close()));
    for (const prefix of prefixes) await deleteKeys(prefix);
  });

  async function instances(count: number, options: { maxFailuresPerIp?: number } = {}) {
    const keyPrefix = uniquePrefix('login');
    prefixes.push(keyPrefix);
    const now = { ms: 1_000_000 };
    const limiters = await Promise.all(Array.from({ length: count }, () => createRedisLoginRateLimiter({
      url: testRedisUrl, keyPrefix, clock: () => now.ms, ...options,
    })));
    opened.push(...limiters);
    return { limiters, advance: (ms: number) => { now.ms += ms; } };
  }

  test('5 failures per id spread over two instances, then refused on both until the oldest leaves the window', async () => {
    const { limiters: [a, b], advance } = await instances(2);
    for (let i = 0; i < 5; i += 1) {
      await (i % 2 === 0 ? a! : b!).beginAttempt('alice', `10.0.0.${i}`);
      advance(minute);
    }
    await assert.rejects(Promise.resolve(a!.beginAttempt('alice', '10.0.0.99')), limited(600));
    await assert.rejects(Promise.resolve(b!.beginAttempt('alice', '10.0.0.99')), limited(600));
    advance(10 * minute);
    await b!.beginAttempt('alice', '10.0.0.99'); // sliding window: the oldest failure left it
    await assert.rejects(Promise.resolve(a!.beginAttempt('alice', '10.0.0.99')), LoginRateLimitedError);
  });

  test('a success on one instance clears the id everywhere and takes the attempt off the IP', async () => {
    const { limiters: [a, b] } = await instances(2, { maxFailuresPerIp: 5 });
    for (let i = 0; i < 4; i += 1) await a!.beginAttempt('alice', '10.0.0.1');
    await (await b!.beginAttempt('alice', '10.0.0.1')).succeeded();
    for (let i = 0; i < 4; i += 1) await b!.beginAttempt('alice', '10.0.0.2');
    // The address 10.0.0.1 holds 4 failures (not 5): one more on carol, and it is still under its budget.
    await a!.beginAttempt('carol', '10.0.0.1');
    await assert.rejects(Promise.resolve(b!.beginAttempt('carol', '10.0.0.1')), limited(1), 'now at its budget, slowed on carol');
    // alice's success from 10.0.0.1 cleared that pair: she is checked there, not slowed.
    await a!.beginAttempt('alice', '10.0.0.1');
  });

  test('an address past its budget, over two instances, is slowed, not locked: accounts it has not failed on are checked; those it has wait 1 s, 2 s, 4 s', async () => {
    const { limiters: [a, b], advance } = await instances(2, { maxFailuresPerIp: 3 });
    for (const [i, id] of ['a', 'b', 'c'].entries()) await (i % 2 === 0 ? a! : b!).beginAttempt(id, '192.0.2.7');
    await (await b!.beginAttempt('d', '192.0.2.7')).succeeded();
    await a!.beginAttempt('e', '192.0.2.7');
    await assert.rejects(Promise.resolve(b!.beginAttempt('e', '192.0.2.7')), limited(2));
    await assert.rejects(Promise.resolve(a!.beginAttempt('a', '192.0.2.7')), limited(2));
    advance(1999);
    await assert.rejects(Promise.resolve(b!.beginAttempt('e', '192.0.2.7')), limited(1));
    advance(1);
    await b!.beginAttempt('e', '192.0.2.7');
    await assert.rejects(Promise.resolve(a!.beginAttempt('e', '192.0.2.7')), limited(4));
    await a!.beginAttempt('e', '192.0.2.8');
    // Twenty more failures on fresh accounts: the delay is capped at the window (15 min).
    for (let i = 0; i < 20; i += 1) await (i % 2 === 0 ? a! : b!).beginAttempt(`fresh-${i}`, '192.0.2.7');
    await assert.rejects(Promise.resolve(a!.beginAttempt('fresh-19', '192.0.2.7')), limited(900));
  });

  test('parallel attempts on three instances: exactly the limit gets through', async () => {
    const { limiters } = await instances(3);
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => limiters[i % 3]!.beginAttempt('bob', `10.1.0.${i}`)));
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 5);
    assert.ok(results.every((r) => r.status === 'fulfilled' || r.reason instanceof LoginRateLimitedError));
  });
});

// Redis gone after start (stopped, restarted): a login is never an error of the throttle's own.
describe('login throttle while its Redis is down', { skip: await privateRedisSkip() }, () => {
  let redis: PrivateRedis;
  let limiter: RedisLoginRateLimiter;
  after(async () => {
    await limiter?.close();
    await redis?.stop();
  });

  test('counts on this instance while Redis is down (same limits), and in Redis again once it is back', async () => {
    redis = await startPrivateRedis();
    limiter = await createRedisLoginRateLimiter({ url: redis.url, keyPrefix: 'outage' });
    await limiter.beginAttempt('alice', '10.0.0.1');
    await redis.stop();

    // Down: every attempt is answered, the throttle's own limit included (5 per id).
    const down = await Promise.allSettled(Array.from({ length: 6 }, () => Promise.resolve(limiter.beginAttempt('mallory', '10.0.0.2'))));
    assert.deepEqual(down.map((r) => r.status), ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    assert.ok((down[5] as PromiseRejectedResult).reason instanceof LoginRateLimitedError);
    // A right password while Redis is down is no error either.
    await (await limiter.beginAttempt('bob', '10.0.0.3')).succeeded();

    await redis.start();
    const client = createClient({ url: redis.url });
    await client.connect();
    try {
      await waitFor(async () => {
        await limiter.beginAttempt('carol', '10.0.0.4');
        return (await client.exists('outage:id:carol')) === 1;
      }, { timeoutMs: 15_000, intervalMs: 200, message: 'attempts are counted in Redis again once it is back' });
    } finally {
      client.destroy();
    }
  });

  test('a hung Redis (frozen: connected, answering nothing) is not waited for past the command timeout', async () => {
    const hung = await createRedisLoginRateLimiter({ url: redis.url, keyPrefix: 'hung', commandTimeoutMs: 300 });
    redis.freeze();
    try {
      // Counted on this instance: the sixth attempt of the id is refused, none hangs.
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await Promise.resolve(hung.beginAttempt('trudy', '10.0.0.5')).then(() => 'counted', (e: unknown) => e));
      assert.deepEqual(results.slice(0, 5), ['counted', 'counted', 'counted', 'counted', 'counted']);
      assert.ok(results[5] instanceof LoginRateLimitedError);
    } finally {
      redis.thaw();
      await hung.close();
    }
  });
});
