import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { startPaymentServer } from '../src/main.ts';
import type { GrpcServer } from '../src/transports/grpc/grpc-server.ts';
import {
  balanceOf, bearer, newUser, openSession, paymentsClient, startPay, startPaymentTest, transferFor, untilAppWaits, type PaymentTest, type TestUser,
} from './support/payments.ts';

/**
 * Bounded payment streams (docs/decisions/operating.md "Bounded resources"): a stream that never sends its
 * first message is ended DEADLINE_EXCEEDED after GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS, and a client's
 * streams beyond GRPC_MAX_STREAMS_PER_CLIENT are refused RESOURCE_EXHAUSTED. Loopback only.
 */
let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS: '1', GRPC_MAX_STREAMS_PER_CLIENT: '20' });
  store = await p.t.platform.payments.addStore({ tid: 'T-BOUND', name: 'Bounded Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
});
after(async () => { await p?.stop(); });

/** Opens a call that sends nothing; resolves with its status and when it came. */
function silentCall(client: grpc.Client & Record<string, any>, method: 'StartPayment' | 'DoPayment', metadata = new grpc.Metadata()) {
  const call: grpc.ClientDuplexStream<any, any> = client[method](metadata);
  const openedAt = Date.now();
  call.on('data', () => undefined);
  call.on('error', () => undefined);
  const status = new Promise<{ code: grpc.status; details: string; afterMs: number }>((resolve) => {
    call.on('status', (s: grpc.StatusObject) => resolve({ code: s.code, details: s.details, afterMs: Date.now() - openedAt }));
  });
  return { call, status };
}

async function pay(client: grpc.Client & Record<string, any>, user: TestUser, amount: string) {
  const uuid = randomUUID();
  const tran = `TB${randomUUID().slice(0, 8)}`;
  const app = openSession(client, 'DoPayment', user.token);
  const pos = openSession(client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send(startPay(p, store.tid, tran, user, uuid, amount));
  const appRequest = await app.next();
  await pos.next();
  app.send(await transferFor(p, user, appRequest));
  return { appEnd: await app.next(), posEnd: await pos.next() };
}

describe('first-message timeout', () => {
  let server: GrpcServer;
  let client: grpc.Client & Record<string, any>;
  before(async () => {
    // Its own server on the same platform, with room for 200 streams from one peer and one connection.
    const { config } = p.t.platform;
    server = await startPaymentServer(
      { ...p.t.platform, config: { ...config, grpcMaxStreamsPerClient: 1000, grpcMaxConcurrentStreamsPerConnection: 1000 } },
      p.t.platform, { port: 0, host: '127.0.0.1' },
    );
    client = paymentsClient(server.port);
  });
  after(async () => { client?.close(); await server?.stop(1000); });

  test('200 silent unauthenticated DoPayment and 20 silent StartPayment streams end DEADLINE_EXCEEDED; a payment meanwhile succeeds', async () => {
    const silent = [
      ...Array.from({ length: 200 }, () => silentCall(client, 'DoPayment')),
      ...Array.from({ length: 20 }, () => silentCall(client, 'StartPayment', bearer(store.apiKey))),
    ];
    const user = await newUser(p, '100');
    const before = await balanceOf(p, store.settlementAddress);
    const payment = await pay(client, user, '3000');
    assert.equal(payment.appEnd.content.state, 'END_PAY');
    assert.equal(payment.posEnd.content.state, 'END_PAY');
    assert.equal(payment.posEnd.common.res_code, '00');
    assert.equal(BigInt(await balanceOf(p, store.settlementAddress)) - BigInt(before), 2n);

    const statuses = await Promise.all(silent.map((s) => s.status));
    for (const s of statuses) {
      assert.equal(s.code, grpc.status.DEADLINE_EXCEEDED, s.details);
      assert.match(s.details, /GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS/);
      assert.ok(s.afterMs >= 900 && s.afterMs < 6000, `ended after ${s.afterMs} ms`);
    }
  });
});

describe('streams per client', () => {
  test('the 21st open stream of one user is refused RESOURCE_EXHAUSTED; a closed one frees its slot; another user is not affected', async () => {
    const user = await newUser(p);
    const open = Array.from({ length: 20 }, () => openSession(p.client, 'DoPayment', user.token));
    const uuids = open.map(() => randomUUID());
    open.forEach((session, i) => session.send({ state: 'START_PAY', user_uuid: uuids[i] }));
    await Promise.all(uuids.map((uuid) => untilAppWaits(p, uuid)));

    const refused = await silentCall(p.client, 'DoPayment', bearer(user.token)).status;
    assert.equal(refused.code, grpc.status.RESOURCE_EXHAUSTED);
    assert.match(refused.details, /GRPC_MAX_STREAMS_PER_CLIENT=20/);

    const other = await newUser(p);
    const otherSession = openSession(p.client, 'DoPayment', other.token);
    const otherUuid = randomUUID();
    otherSession.send({ state: 'START_PAY', user_uuid: otherUuid });
    await untilAppWaits(p, otherUuid);

    open[0]!.call.cancel();
    await open[0]!.closed;
    const again = openSession(p.client, 'DoPayment', user.token);
    const againUuid = randomUUID();
    again.send({ state: 'START_PAY', user_uuid: againUuid });
    await untilAppWaits(p, againUuid);

    for (const session of [...open.slice(1), otherSession, again]) session.call.cancel();
    await Promise.all([...open.slice(1), otherSession, again].map((session) => session.closed));
  });

  test('unauthenticated streams count against their peer address', async () => {
    const silent = Array.from({ length: 21 }, () => silentCall(p.client, 'DoPayment', bearer('not-a-jwt')));
    const statuses = await Promise.all(silent.map((s) => s.status));
    assert.equal(statuses.filter((s) => s.code === grpc.status.RESOURCE_EXHAUSTED).length, 1);
    assert.equal(statuses.filter((s) => s.code === grpc.status.DEADLINE_EXCEEDED).length, 20);
  });
});
