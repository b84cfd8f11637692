import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { createRedisPairingDesk, type RedisPairingDesk } from './redis-pairing-desk.ts';
import type { SessionEvent } from './session-events.ts';
import { DomainError } from '#shared/errors.ts';
import { privateRedisSkip, startPrivateRedis, type PrivateRedis } from '../../test/support/redis.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// The Redis pairing desk on a Redis of the test's own that is killed and started again (empty) in
// the middle of a pairing, two desks standing for two instances: what was waiting waits for Redis
// within its window and completes; a window that ends first ends with its own code, told to both.
const sink = () => {
  const events: SessionEvent[] = [];
  return { events, send: (event: SessionEvent) => { events.push(event); } };
};
const arrival = (userUuid: string, s = sink()) => ({ userUuid, userId: 'u1', userAddress: '0xA', sink: s });
const credentials = { tempKey: 't', hashKey: 'h', signature: '0xs', comment: 'c' };
const live = () => new AbortController().signal;
const until = (condition: () => boolean | Promise<boolean>, message: string) => waitFor(condition, { timeoutMs: 10_000, message, intervalMs: 20 });

describe('Redis pairing desk across a Redis outage', { skip: await privateRedisSkip() }, () => {
  let redis: PrivateRedis;
  let a: RedisPairingDesk;
  let b: RedisPairingDesk;
  const keyPrefix = 'outage';
  before(async () => {
    redis = await startPrivateRedis();
    a = await createRedisPairingDesk({ url: redis.url, appWaitMs: 8000, keyPrefix });
    b = await createRedisPairingDesk({ url: redis.url, appWaitMs: 8000, keyPrefix });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await redis?.stop();
  });

  const inRedis = async (kind: 'app' | 'pos', userUuid: string) => {
    const client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return (await client.exists(`${keyPrefix}:${kind}:${userUuid}`)) === 1;
    } finally {
      client.destroy();
    }
  };

  /** How many keys Redis loaded from its data at its last start. */
  const keysLoaded = async () => {
    const client = createClient({ url: redis.url });
    client.on('error', () => undefined);
    await client.connect();
    try {
      return Number(/rdb_last_load_keys_loaded:(\d+)/.exec(await client.info('persistence'))?.[1] ?? 0);
    } finally {
      client.destroy();
    }
  };

  test('paired across instances, the app\'s TRANSFER sent while Redis is down reaches the POS once it is back; the END_PAY reaches the app', async () => {
    const q = randomUUID();
    const s = sink();
    const connection = a.connectApp(arrival(q, s));
    await until(() => inRedis('app', q), 'the app waits in Redis');
    const app = await b.takeApp(q, 8000, live());
    app.send({ type: 'transfer_pending', tranNo: 'T1' });
    await until(() => s.events.length === 1, 'the app hears the POS');
    await redis.stop();
    connection.submitTransfer(credentials);
    const transfer = app.awaitTransfer(8000, live());
    await redis.start();
    assert.deepEqual(await transfer, credentials);
    app.send({ type: 'failed', error: new DomainError('payment.expired', 'x'), tranNo: 'T1' });
    await until(() => s.events.length === 2, 'the app hears its END_PAY');
  });

  test('an app waiting before the outage and a POS coming during it pair once Redis is back (it came back empty)', async () => {
    const q = randomUUID();
    const connection = a.connectApp(arrival(q));
    await until(() => inRedis('app', q), 'the app waits in Redis');
    await redis.stop();
    const taken = b.takeApp(q, 8000, live());
    await redis.start();
    const app = await taken;
    assert.equal(app.userId, 'u1');
    const transfer = app.awaitTransfer(8000, live());
    connection.submitTransfer(credentials);
    assert.deepEqual(await transfer, credentials);
  });

  test('a payment that ends while Redis is down frees its user_uuid once Redis is back with its data: the user pays again', async () => {
    const q = randomUUID();
    const s = sink();
    a.connectApp(arrival(q, s));
    await until(() => inRedis('app', q), 'the app waits in Redis');
    const app = await b.takeApp(q, 8000, live());
    await redis.stop({ keepData: true });
    app.send({ type: 'failed', error: new DomainError('payment.expired', 'x'), tranNo: 'T4' });
    await redis.start();
    // Back with its data (the desks may release the key at once, so the keys loaded are what shows it).
    assert.ok(await keysLoaded() > 0, 'Redis came back with the paired app\'s key');
    await until(() => s.events.length === 1, 'the app hears its END_PAY');
    await until(async () => !(await inRedis('app', q)), 'the ended payment\'s key is released');
    const again = sink();
    a.connectApp(arrival(q, again));
    await until(() => inRedis('app', q), 'the user\'s next DoPayment waits in Redis');
    assert.deepEqual(again.events, [], 'not refused as a user_uuid in use');
  });

  test('a hung Redis (frozen: connected, answering nothing) holds a POS no longer than its window: 03 then; after it, pairing works', async () => {
    const q = randomUUID();
    const connection = a.connectApp(arrival(q));
    await until(() => inRedis('app', q), 'the app waits in Redis');
    redis.freeze();
    try {
      await assert.rejects(b.takeApp(q, 500, live()), { code: 'payment.expired' });
    } finally {
      redis.thaw();
    }
    connection.hangUp();
    const r = randomUUID();
    const next = a.connectApp(arrival(r));
    const app = await b.takeApp(r, 8000, live());
    const transfer = app.awaitTransfer(8000, live());
    next.submitTransfer(credentials);
    assert.deepEqual(await transfer, credentials);
  });

  test('a POS whose window ends while Redis is down gets 03 then; the app waiting for it is told that failure once Redis is back', async () => {
    const q = randomUUID();
    const s = sink();
    a.connectApp(arrival(q, s));
    await until(() => inRedis('app', q), 'the app waits in Redis');
    await redis.stop();
    await assert.rejects(b.takeApp(q, 300, live()), { code: 'payment.expired' });
    b.failWaitingApp(q, { error: new DomainError('payment.expired', 'the app did not connect within the pairing window'), tranNo: 'T3' });
    await redis.start();
    await until(() => s.events.length > 0, 'the app hears the POS\'s failure');
    const [event] = s.events;
    assert.equal(event?.type === 'failed' && `${event.error.code} ${event.tranNo}`, 'payment.expired T3');
  });
});
