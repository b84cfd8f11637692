import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createPairingDesk } from '../src/pairing/in-process-pairing-desk.ts';
import type { AppArrival, AppConnection, PairingDesk } from '../src/pairing/pairing-desk.ts';
import { createRedisPairingDesk, type RedisPairingDesk } from '../src/pairing/redis-pairing-desk.ts';
import type { SessionEvent } from '../src/pairing/session-events.ts';
import { DomainError } from '../src/shared/errors.ts';
import { createClient } from 'redis';
import { waitFor } from './support/wait-for.ts';
import { untilAtDesk } from './support/pairing.ts';
import { deleteKeys, keysUnder, redisSkip, testRedisUrl, uniquePrefix } from './support/redis.ts';

/**
 * One contract for every pairing desk: the in-process one, the Redis one with both streams on one
 * instance, and the Redis one with the app on instance A and the POS on instance B. The payment
 * flows (test/payments*.test.ts) build on exactly these behaviours.
 */
interface Desks {
  /** Where the app's DoPayment arrives. */
  app: PairingDesk;
  /** Where the POS's StartPayment arrives. */
  pos: PairingDesk;
  /** Another POS instance (two POSes racing). */
  otherPos: PairingDesk;
  close(): Promise<void>;
}

const skipRedis = await redisSkip();
const redis = !skipRedis;
const prefix = uniquePrefix('desk-contract');
const opened: RedisPairingDesk[] = [];
after(async () => {
  await Promise.all(opened.map((desk) => desk.close()));
  if (redis) await deleteKeys(prefix);
});

async function redisDesk(appWaitMs: number): Promise<RedisPairingDesk> {
  const desk = await createRedisPairingDesk({ url: testRedisUrl, appWaitMs, keyPrefix: prefix });
  opened.push(desk);
  return desk;
}

const variants: Array<{ name: string; skip?: string; make(appWaitMs: number): Promise<Desks> }> = [
  {
    name: 'in-process desk',
    async make(appWaitMs) {
      const desk = createPairingDesk({ appWaitMs });
      return { app: desk, pos: desk, otherPos: desk, close: async () => undefined };
    },
  },
  {
    name: 'Redis desk, one instance',
    skip: skipRedis || undefined,
    async make(appWaitMs) {
      const desk = await redisDesk(appWaitMs);
      return { app: desk, pos: desk, otherPos: desk, close: () => desk.close() };
    },
  },
  {
    name: 'Redis desk, app on instance A, POS on instance B (and C)',
    skip: skipRedis || undefined,
    async make(appWaitMs) {
      const [a, b, c] = await Promise.all([redisDesk(appWaitMs), redisDesk(appWaitMs), redisDesk(appWaitMs)]);
      return { app: a, pos: b, otherPos: c, close: async () => { await Promise.all([a.close(), b.close(), c.close()]); } };
    },
  },
];

const sink = () => {
  const events: SessionEvent[] = [];
  return { events, send: (event: SessionEvent) => { events.push(event); } };
};
const arrival = (userUuid: string, s = sink()): AppArrival => ({ userUuid, userId: 'u1', userAddress: '0xA', sink: s });
const credentials = { tempKey: 't', hashKey: 'h', signature: '0xs', comment: 'c' };
const live = () => new AbortController().signal;
const uuid = () => randomUUID();

const until = (condition: () => boolean | Promise<boolean>, message: string, timeoutMs = 10_000) => waitFor(condition, { timeoutMs, message, intervalMs: 5 });

/** Until the app (or a POS) of `userUuid` waits at `desk`, or with `gone`, no longer does. */
const atDesk = (desk: PairingDesk, side: 'app' | 'pos', userUuid: string, gone = false, redisKeyPrefix = prefix) =>
  untilAtDesk({ desk, redisKeyPrefix }, side, userUuid, { gone, timeoutMs: 10_000 });

/**
 * Until the desk has recorded that the app of `userUuid` hung up while waiting: at once in-process;
 * over Redis when its key says `departed` (a round trip later).
 */
async function departureRecorded(desk: PairingDesk, userUuid: string): Promise<void> {
  if (!('close' in desk)) return;
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    await until(async () => JSON.parse((await client.get(`${prefix}:app:${userUuid}`)) ?? '{}').s === 'departed', `the app of ${userUuid} is recorded as departed in Redis`);
  } finally {
    await client.close();
  }
}

/** Connects an app and waits until the desk has registered it (at once in-process, a round trip over Redis). */
async function connect(desk: PairingDesk, a: AppArrival, redisKeyPrefix = prefix): Promise<AppConnection> {
  const connection = desk.connectApp(a);
  await atDesk(desk, 'app', a.userUuid, false, redisKeyPrefix);
  return connection;
}

/** An app refused: in-process the call throws; over Redis the refusal is the app's failure event. */
async function refused(desk: PairingDesk, a: AppArrival & { sink: ReturnType<typeof sink> }): Promise<string> {
  try {
    desk.connectApp(a);
  } catch (error) {
    return (error as DomainError).code;
  }
  await until(() => a.sink.events.length > 0, 'the refused app hears its refusal');
  const event = a.sink.events[0]!;
  return event.type === 'failed' ? event.error.code : event.type;
}

for (const variant of variants) {
  describe(`pairing desk contract: ${variant.name}`, { ...(variant.skip && { skip: variant.skip }) }, () => {
    test('app first, then POS: paired; TRANSFER resolves the wait; events reach the app in order', async () => {
      const d = await variant.make(2000);
      const s = sink();
      const q = uuid();
      const c2 = await connect(d.app, arrival(q, s));
      const app = await d.pos.takeApp(q, 2000, live());
      assert.equal(app.userAddress, '0xA');
      assert.equal(app.userId, 'u1');
      app.send({ type: 'transfer_pending', tranNo: 'N1' });
      const waiting = app.awaitTransfer(2000, live());
      c2.submitTransfer(credentials);
      assert.deepEqual(await waiting, credentials);
      app.send({ type: 'failed', error: new DomainError('wallet.signature_invalid', 'bad signature', { details: 'x' }), tranNo: 'N1' });
      await until(() => s.events.length === 2, 'the app receives transfer_pending and the failure');
      assert.equal(s.events[0]!.type, 'transfer_pending');
      const failed = s.events[1]!;
      assert.ok(failed.type === 'failed' && failed.error instanceof DomainError);
      assert.equal(failed.type === 'failed' && failed.error.code, 'wallet.signature_invalid');
      assert.equal(failed.type === 'failed' && failed.error.details, 'x');
      assert.equal(failed.type === 'failed' && failed.tranNo, 'N1');
      c2.hangUp();
      await d.close();
    });

    test('POS first: waits for the app within the window, else 03', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      const pending = d.pos.takeApp(q, 2000, live());
      await atDesk(d.pos, 'pos', q);
      d.app.connectApp(arrival(q));
      assert.equal((await pending).userId, 'u1');
      const late = uuid();
      await assert.rejects(d.pos.takeApp(late, 50, live()), { code: 'payment.expired' });
      await atDesk(d.pos, 'pos', q, true);
      await atDesk(d.pos, 'pos', late, true);
      await d.close();
    });

    test('the app hanging up before TRANSFER is 01; a TRANSFER already given is kept', async () => {
      const d = await variant.make(2000);
      const q4 = uuid();
      const first = await connect(d.app, arrival(q4));
      const app = await d.pos.takeApp(q4, 2000, live());
      const waiting = app.awaitTransfer(2000, live());
      first.hangUp();
      await assert.rejects(waiting, { code: 'payment.canceled_by_user' });

      const q5 = uuid();
      const second = await connect(d.app, arrival(q5));
      const paired = await d.pos.takeApp(q5, 2000, live());
      second.submitTransfer(credentials);
      second.hangUp();
      assert.deepEqual(await paired.awaitTransfer(2000, live()), credentials);
      await d.close();
    });

    test('the app hanging up right after the claim, before any message reached it, is 01', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      const connection = await connect(d.app, arrival(q));
      const app = await d.pos.takeApp(q, 2000, live());
      connection.hangUp();
      await assert.rejects(app.awaitTransfer(2000, live()), { code: 'payment.canceled_by_user' });
      await d.close();
    });

    test('no TRANSFER in time is 03; the POS aborting is 01', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      await connect(d.app, arrival(q));
      const app = await d.pos.takeApp(q, 2000, live());
      await assert.rejects(app.awaitTransfer(30, live()), { code: 'payment.expired' });
      const abort = new AbortController();
      const waiting = app.awaitTransfer(2000, abort.signal);
      abort.abort();
      await assert.rejects(waiting, { code: 'payment.canceled_by_user' });
      const pendingAbort = new AbortController();
      const absent = uuid();
      const waitingPos = d.pos.takeApp(absent, 2000, pendingAbort.signal);
      await atDesk(d.pos, 'pos', absent);
      pendingAbort.abort();
      await assert.rejects(waitingPos, { code: 'payment.canceled_by_user' });
      await d.close();
    });

    test('an app nobody picks up is told 03; a user_uuid in use is refused', async () => {
      // A 500 ms wait: Redis's expiry is retried within the wait, and 100 ms gave up on a loaded machine.
      const d = await variant.make(500);
      const s = sink();
      const q = uuid();
      await connect(d.app, arrival(q, s));
      assert.equal(await refused(d.app, { ...arrival(q), sink: sink() }), 'request.invalid');
      assert.equal(await refused(d.pos, { ...arrival(q), sink: sink() }), 'request.invalid', 'also on another instance');
      await until(() => s.events.length > 0, 'the app nobody picked up is told 03');
      assert.equal(s.events[0]?.type, 'failed');
      assert.equal(s.events[0]?.type === 'failed' && s.events[0].error.code, 'payment.expired');
      await atDesk(d.app, 'app', q, true);
      // A POS coming after the app gave up waits for a new app (not this one).
      await assert.rejects(d.pos.takeApp(q, 30, live()), { code: 'payment.expired' });
      await d.close();
    });

    test('a waiting app is told when the POS attempt fails before pairing', async () => {
      const d = await variant.make(2000);
      const s = sink();
      const q = uuid();
      const connection = await connect(d.app, arrival(q, s));
      d.pos.failWaitingApp(q, { error: new DomainError('payment.expired', 'the QR code has expired'), tranNo: 'N8' });
      await until(() => s.events.length > 0, 'the waiting app hears the POS\'s failure');
      assert.equal(s.events.length, 1);
      assert.equal(s.events[0]?.type === 'failed' && s.events[0].tranNo, 'N8');
      await atDesk(d.app, 'app', q, true);
      connection.hangUp();
      await d.close();
    });

    test('a waiting app is given the END_PAY of its payment a POS retry found approved, and let go', async () => {
      const d = await variant.make(2000);
      const s = sink();
      const q = uuid();
      const connection = await connect(d.app, arrival(q, s));
      const approval = {
        tranNo: 'N9', contractAddress: '0xC', tokenSymbol: 'VIXP', userAddress: '0xU', tokenAmount: '1', transferTransactionId: '0xT',
        approvalNo: '2026112300000001', approvalDate: '20261123000000', exchangeDateIndex: '2026112300001', exchangeRate: '1000',
        exchangeAmount: '1000', exchangeCurrency: 'KRW',
      };
      d.pos.approveWaitingApp(q, { type: 'end_pay', approval });
      await until(() => s.events.length > 0, 'the waiting app hears the approval');
      assert.equal(s.events.length, 1);
      assert.deepEqual(s.events[0], { type: 'end_pay', approval });
      await atDesk(d.app, 'app', q, true);
      // Nobody else is waiting: a second approval tells no one.
      d.pos.approveWaitingApp(q, { type: 'end_pay', approval });
      connection.hangUp();
      await d.close();
      assert.equal(s.events.length, 1);
    });

    test('a POS coming for an app that already hung up is told 01 at once', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      (await connect(d.app, arrival(q))).hangUp();
      // Over Redis the hang-up is recorded one round trip later (the POS scans the QR code well after).
      await departureRecorded(d.app, q);
      await assert.rejects(d.pos.takeApp(q, 1000, live()), { code: 'payment.canceled_by_user' });
      await d.close();
    });

    test('two POSes racing for one waiting app: exactly one pairs, the other is refused (11)', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      await connect(d.app, arrival(q));
      const results = await Promise.allSettled([d.pos.takeApp(q, 500, live()), d.otherPos.takeApp(q, 500, live())]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const loser = results.find((r) => r.status === 'rejected');
      assert.equal((loser as PromiseRejectedResult).reason.code, 'request.invalid');
      await d.close();
    });

    test('two POSes waiting for one absent app: the second is refused (11); the first pairs when it comes', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      const first = d.pos.takeApp(q, 2000, live());
      await atDesk(d.pos, 'pos', q);
      await assert.rejects(d.otherPos.takeApp(q, 2000, live()), { code: 'request.invalid' });
      d.app.connectApp(arrival(q));
      assert.equal((await first).userAddress, '0xA');
      await d.close();
    });

    test('a user_uuid is free again once its payment ended', async () => {
      const d = await variant.make(2000);
      const q = uuid();
      const s = sink();
      await connect(d.app, arrival(q, s));
      const app = await d.pos.takeApp(q, 2000, live());
      app.send({ type: 'failed', error: new DomainError('payment.expired', 'late'), tranNo: 'N9' });
      await until(() => s.events.length === 1, 'the app hears the end of its payment');
      const again = sink();
      await connect(d.app, arrival(q, again));
      assert.equal(again.events.length, 0);
      assert.equal((await d.otherPos.takeApp(q, 2000, live())).userId, 'u1');
      await d.close();
    });
  });
}

describe('Redis desk housekeeping', { skip: skipRedis }, () => {
  test('keys live under the prefix only and are gone after a finished payment', async () => {
    const own = uniquePrefix('housekeeping');
    const a = await createRedisPairingDesk({ url: testRedisUrl, appWaitMs: 2000, keyPrefix: own });
    const b = await createRedisPairingDesk({ url: testRedisUrl, appWaitMs: 2000, keyPrefix: own });
    try {
      const q = uuid();
      const s = sink();
      const connection = await connect(a, arrival(q, s), own);
      // Besides each instance's heartbeat (`<prefix>:alive:<instance>`, removed when it closes).
      const pairingKeys = async () => (await keysUnder(own)).filter((key) => !key.startsWith(`${own}:alive:`));
      assert.deepEqual(await pairingKeys(), [`${own}:app:${q}`]);
      const app = await b.takeApp(q, 2000, live());
      const waiting = app.awaitTransfer(2000, live());
      connection.submitTransfer(credentials);
      await waiting;
      app.send({ type: 'failed', error: new DomainError('internal', 'x') });
      await until(() => s.events.length === 1, 'the app hears the end of its payment');
      connection.hangUp();
      // The hang-up reaches Redis a round trip later.
      await until(async () => (await pairingKeys()).length === 0, `no key left under ${own}`);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await deleteKeys(own);
    }
  });
});
