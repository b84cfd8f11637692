import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { startPaymentServer } from '../src/main.ts';
import { composePayments, type PaymentPart } from '../src/compose/platform.ts';
import type { RedisPairingDesk } from '../src/pairing/redis-pairing-desk.ts';
import { createClient } from 'redis';
import { waitFor } from './support/wait-for.ts';
import { untilAtDesk } from './support/pairing.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { balanceOf, newUser, openSession, paymentsClient, startPay, transferFor, type PaymentTest } from './support/payment-calls.ts';
import { deleteKeys, keysUnder, redisSkip, testRedisUrl, uniquePrefix } from './support/redis.ts';

/**
 * Two payment server instances, A and B, each with its own Redis pairing desk (same key prefix) over
 * one platform (the shared database and chain stand for what instances share in production; the
 * pairing itself has nothing in memory in common). The app talks to A, the POS to B.
 */
const skipRedis = await redisSkip();
const prefix = uniquePrefix('two-instances');

let t: TestPlatform;
/** A payment server instance: its own payment part (services over its own Redis desk) and gRPC server. */
type Instance = PaymentTest & { part: PaymentPart };
let a: Instance;
let b: Instance;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };

async function instance(): Promise<Instance> {
  const part = await composePayments(t.platform, { redis: true, redisKeyPrefix: prefix });
  const server = await startPaymentServer(t.platform, part, { port: 0, host: '127.0.0.1' });
  const client = paymentsClient(server.port);
  return { t, server, client, part, stop: async () => { client.close(); await server.stop(1000); await part.close(); } };
}

const deskOf = (p: Instance) => p.part.desk as RedisPairingDesk;
const tranNo = () => `TR${randomUUID().slice(0, 8)}`;

const until = (condition: () => boolean | Promise<boolean>, message: string, timeoutMs = 5000) => waitFor(condition, { timeoutMs, message });
const appWaitingOnA = (userUuid: string) => untilAtDesk({ desk: deskOf(a), redisKeyPrefix: prefix }, 'app', userUuid, { timeoutMs: 5000 });
/** Until the pairing of `userUuid` left nothing behind: no key of it in Redis. */
const pairingOver = (userUuid: string) => until(async () => (await keysUnder(prefix)).every((key) => !key.includes(userUuid)), `no key of user_uuid ${userUuid} left under ${prefix}`);

/** The Redis value of an app's pairing key, parsed (undefined when there is none). */
async function appRecord(userUuid: string): Promise<{ s?: string } | undefined> {
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    const value = await client.get(`${prefix}:app:${userUuid}`);
    return value ? JSON.parse(value) : undefined;
  } finally {
    await client.close();
  }
}

describe('payments across two instances (Redis pairing desk)', { skip: skipRedis }, () => {
  before(async () => {
    t = await startTestPlatform({
      env: { REDIS_URL: testRedisUrl, PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' },
      redisKeyPrefix: uniquePrefix('two-instances-unused'),
    });
    a = await instance();
    b = await instance();
    store = await a.part.payments.addStore({ tid: 'T-2I01', name: 'Two Towers Cafe' });
    await a.part.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  });
  after(async () => {
    await a?.stop();
    await b?.stop();
    await t?.stop();
    await deleteKeys(prefix);
  });

  test('the two servers have desks of their own', () => {
    assert.notEqual(a.part.desk, b.part.desk);
    assert.notEqual(deskOf(a).instanceId, undefined);
    assert.notEqual(deskOf(a).instanceId, deskOf(b).instanceId);
  });

  for (const [order, kind] of [['app first', 'contract-literal'], ['POS first', 'contract-literal'], ['app first', 'one-time user_uuid'], ['POS first', 'one-time user_uuid']] as const) {
    test(`app on A, POS on B (${order}, ${kind} app): END_PAY on both sides, tokens moved exactly once`, async () => {
      const user = await newUser(a, '100');
      const storeBefore = Number(await balanceOf(a, store.settlementAddress));
      // A contract-literal app sends only state and its QR code carries the user's id; another app may send a one-time user_uuid.
      const uuid = kind === 'contract-literal' ? user.userId : randomUUID();
      const appStart = kind === 'contract-literal' ? { state: 'START_PAY' } : { state: 'START_PAY', user_uuid: uuid };
      const tran = tranNo();
      const app = openSession(a.client, 'DoPayment', user.token);
      const pos = openSession(b.client, 'StartPayment', store.apiKey);
      if (order === 'app first') {
        app.send(appStart);
        await appWaitingOnA(uuid);
        pos.send(startPay(a, store.tid, tran, user, uuid, '15000'));
      } else {
        pos.send(startPay(a, store.tid, tran, user, uuid, '15000'));
        await untilAtDesk({ desk: deskOf(b), redisKeyPrefix: prefix }, 'pos', uuid, { timeoutMs: 5000 });
        app.send(appStart);
      }
      const appRequest = await app.next();
      assert.equal(appRequest.content.state, 'REQUEST_TRANSFER', JSON.stringify(appRequest.common));
      assert.equal(appRequest.content.token_amount, '10');
      assert.equal(appRequest.content.settlement_address, store.settlementAddress);
      assert.equal(appRequest.content.tran_no, tran);
      assert.equal(appRequest.common.target_api, 'doPayment');
      const posRequest = await pos.next();
      assert.equal(posRequest.content.state, 'REQUEST_TRANSFER');
      assert.equal(posRequest.content.tran_no, tran);

      app.send(await transferFor(a, user, appRequest));
      const posEnd = await pos.next();
      const appEnd = await app.next();
      assert.equal(posEnd.common.res_code, '00', JSON.stringify(posEnd.common));
      assert.equal(posEnd.content.state, 'END_PAY');
      assert.match(posEnd.content.approval_no, /^\d{16}$/);
      assert.match(posEnd.content.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
      assert.equal(appEnd.common.res_code, '00');
      assert.equal(appEnd.content.state, 'END_PAY');
      assert.equal(appEnd.content.approval_no, '');
      assert.equal(appEnd.content.transfer_transaction_id, posEnd.content.transfer_transaction_id);
      assert.equal((await pos.closed).code, 0);
      assert.equal((await app.closed).code, 0);

      assert.equal(await balanceOf(a, user.address), '90');
      assert.equal(Number(await balanceOf(a, store.settlementAddress)) - storeBefore, 10);
      const record = await a.part.payments.findPayment(store.tid, tran);
      assert.equal(record?.status, 'approved');
      await pairingOver(uuid);
    });
  }

  test('the app on A hanging up before TRANSFER is 01 END_PAY to the POS on B; nothing moves', async () => {
    const user = await newUser(a, '10');
    const storeBefore = await balanceOf(a, store.settlementAddress);
    const uuid = randomUUID();
    const app = openSession(a.client, 'DoPayment', user.token);
    const pos = openSession(b.client, 'StartPayment', store.apiKey);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await appWaitingOnA(uuid);
    pos.send(startPay(a, store.tid, tranNo(), user, uuid, '1500'));
    assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
    assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
    app.call.end();

    const posEnd = await pos.next();
    assert.equal(posEnd.common.res_code, '01');
    assert.equal(posEnd.common.res_message, 'Canceled by the user');
    assert.equal(posEnd.content.state, 'END_PAY');
    assert.equal((await pos.closed).code, 0);
    const appEnd = await app.next();
    assert.equal(appEnd.common.res_code, '01', 'the app, half-closed, hears the end too');
    assert.equal((await app.closed).code, 0);
    assert.equal(await balanceOf(a, user.address), '10');
    assert.equal(await balanceOf(a, store.settlementAddress), storeBefore);
  });

  test('an app on A that left before any POS came: the POS on B is told 01 at once', async () => {
    const user = await newUser(a, '10');
    const uuid = randomUUID();
    const app = openSession(a.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await appWaitingOnA(uuid);
    app.call.cancel();
    await app.closed;
    // A's record of the departure reaches Redis a round trip after the hang-up.
    await until(async () => (await appRecord(uuid))?.s === 'departed', `the app of ${uuid} is recorded as departed in Redis`);
    const pos = openSession(b.client, 'StartPayment', store.apiKey);
    pos.send(startPay(a, store.tid, tranNo(), user, uuid, '1500'));
    const posEnd = await pos.next();
    // Told by the departure record, not by waiting out the pairing window (that would be 03).
    assert.equal(posEnd.common.res_code, '01', JSON.stringify(posEnd.common));
    assert.equal(posEnd.common.res_message, 'Canceled by the user');
    assert.equal(posEnd.content.state, 'END_PAY');
    assert.equal((await pos.closed).code, 0);
  });

  test('two POSes on A and B racing for one app on A: exactly one pairs and is paid, the other is refused (11)', async () => {
    const user = await newUser(a, '10');
    const uuid = randomUUID();
    const app = openSession(a.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await appWaitingOnA(uuid);
    const tranA = tranNo();
    const tranB = tranNo();
    const posA = openSession(a.client, 'StartPayment', store.apiKey);
    const posB = openSession(b.client, 'StartPayment', store.apiKey);
    posA.send(startPay(a, store.tid, tranA, user, uuid, '1500'));
    posB.send(startPay(a, store.tid, tranB, user, uuid, '1500'));
    const [firstA, firstB] = await Promise.all([posA.next(), posB.next()]);
    const states = [firstA, firstB].map((m) => `${m.content.state}/${m.common.res_code}`).sort();
    assert.deepEqual(states, ['END_PAY/11', 'REQUEST_TRANSFER/00'], JSON.stringify([firstA.common, firstB.common]));
    const [winner, winnerTran, loser] = firstA.content.state === 'REQUEST_TRANSFER' ? [posA, tranA, firstB] : [posB, tranB, firstA];
    assert.match(loser.common.res_message, /already in a payment|another POS/);

    const request = await app.next();
    assert.equal(request.content.state, 'REQUEST_TRANSFER');
    assert.equal(request.content.tran_no, winnerTran, 'the app is asked by the POS that paired');
    app.send(await transferFor(a, user, request));
    assert.equal((await winner.next()).common.res_code, '00');
    assert.equal((await app.next()).common.res_code, '00');
    assert.equal(await balanceOf(a, user.address), '9');
  });

  test('no pairing keys are left behind once a payment ended', async () => {
    const user = await newUser(a, '10');
    const uuid = randomUUID();
    const app = openSession(a.client, 'DoPayment', user.token);
    const pos = openSession(b.client, 'StartPayment', store.apiKey);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await appWaitingOnA(uuid);
    pos.send(startPay(a, store.tid, tranNo(), user, uuid, '1500'));
    const request = await app.next();
    assert.equal(request.content.state, 'REQUEST_TRANSFER');
    assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
    const ownKeys = async () => (await keysUnder(prefix)).filter((key) => key.includes(uuid));
    // While the payment runs, its user_uuid holds the app's key.
    assert.ok((await ownKeys()).includes(`${prefix}:app:${uuid}`), (await ownKeys()).join());
    app.send(await transferFor(a, user, request));
    assert.equal((await pos.next()).common.res_code, '00');
    assert.equal((await app.next()).common.res_code, '00');
    assert.equal((await pos.closed).code, 0);
    assert.equal((await app.closed).code, 0);
    await pairingOver(uuid);
  });
});
