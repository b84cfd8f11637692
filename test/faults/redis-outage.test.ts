import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient } from 'redis';
import { startPaymentServer } from '../../src/main.ts';
import { composePayments, type PaymentPart } from '../../src/compose/platform.ts';
import type { GrpcServer } from '../../src/transports/grpc/grpc-server.ts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { openSession, paymentsClient, type Session } from '../support/payments.ts';
import { nextOrEnd, within } from '../support/fleet-operations.ts';
import { privateRedisSkip, startPrivateRedis, type PrivateRedis } from '../support/redis.ts';
import { resCodeByFamily } from '../../src/payments/result-codes.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, password, rigUser, serverLog, signedTransfer, startFaultRig, type FaultRig, type RigUser } from './rig.ts';

/**
 * Redis stopped for ~8 s and started again (empty, as a Redis without persistence comes back) while
 * users log in and POS/app pairs pay across two instances that pair through it: A, the server as
 * users run it (`node src/main.ts`, REDIS_URL = a Redis of this test's own), and B, a payment server
 * in this process over the same data directory with a Redis pairing desk of its own. Logins (on A,
 * whose failed-login throttle is in that Redis) never answer 500 and stay throttled; /readyz names
 * Redis while it is down and is ready again after; every pairing, whatever phase the outage caught
 * it in, ends with one documented code on both of its streams, the same one, recorded as such, and
 * a pairing Redis came back for within its window completes; afterwards a login and a payment work,
 * and every approved payment is on chain exactly once.
 */
const skip = await privateRedisSkip();

let redis: PrivateRedis;
let rig: FaultRig;
/** Instance B: a payment server with a Redis pairing desk of its own, beside the rig's server (A). */
let b: { part: PaymentPart & { close(): Promise<void> }; server: GrpcServer; client: ReturnType<typeof paymentsClient> };
let store: { tid: string; apiKey: string; settlementAddress: string };

before(async () => {
  if (skip) return;
  redis = await startPrivateRedis();
  // Windows longer than the outage (pairing 20 s, idle 30 s): a pairing Redis comes back for in time completes.
  rig = await startFaultRig({ REDIS_URL: redis.url, PAYMENT_PAIRING_WINDOW_SECONDS: '20', PAYMENT_IDLE_TIMEOUT_SECONDS: '30' });
  const part = await composePayments(rig.operator, { redis: true });
  const server = await startPaymentServer(rig.operator, part, { port: 0, host: '127.0.0.1' });
  b = { part, server, client: paymentsClient(server.port) };
  await rig.operator.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  store = await rig.operator.payments.addStore({ tid: `T-RO${randomUUID().slice(0, 6)}`, name: 'Outage Cafe' });
});
after(async () => {
  b?.client.close();
  await b?.server.stop(1000);
  await b?.part.close();
  await rig?.stop();
  await redis?.stop();
});

type Side = 'A' | 'B';
/** What one stream heard last: END_PAY's code and tran_no, or why it heard none. */
interface End { code?: string; message?: string; tranNo?: string; lost?: string }
const endOf = async (session: Session, boundMs: number): Promise<End> => {
  try {
    for (;;) {
      const message = await nextOrEnd(session, boundMs);
      if (message.content.state === 'REQUEST_TRANSFER') continue;
      return { code: message.common.res_code, message: message.common.res_message, tranNo: message.content.tran_no };
    }
  } catch (error) {
    return { lost: (error as Error).message };
  }
};

/**
 * One POS/app pair, its phases driven by the test: `open` sends the app's and/or the POS's START_PAY
 * (whichever `first` says, or both), `rest` what is left; the app answers REQUEST_TRANSFER with a
 * TRANSFER once `transferGate` resolves. Every wait is bounded: a stream that hears nothing ends `lost`.
 */
class Pair {
  readonly tranNo = `TR${randomUUID().slice(0, 8)}`;
  readonly uuid = randomUUID();
  app!: Session;
  pos!: Session;
  appRequested!: Promise<boolean>;
  ends!: Promise<{ app: End; pos: End }>;
  private posStarted = false;
  private appStarted = false;

  readonly label: string;
  readonly user: RigUser;
  readonly appOn: Side;
  readonly posOn: Side;
  /** The code both streams must end with. */
  readonly expect: string;
  readonly transferGate: Promise<void>;
  /** The QR code's validity from the POS's START_PAY: it bounds the POS's pairing window. */
  readonly expiresInSeconds: number;

  constructor(label: string, user: RigUser, sides: { app: Side; pos: Side }, expect: string, options: { transferGate?: Promise<void>; expiresInSeconds?: number } = {}) {
    this.label = label;
    this.user = user;
    this.appOn = sides.app;
    this.posOn = sides.pos;
    this.expect = expect;
    this.transferGate = options.transferGate ?? Promise.resolve();
    this.expiresInSeconds = options.expiresInSeconds ?? 300;
  }

  private clientOf(side: Side) { return side === 'A' ? paymentsClient(rig.grpcPort) : b.client; }

  open(first: 'app' | 'pos' | 'both'): void {
    this.app = openSession(this.clientOf(this.appOn), 'DoPayment', this.user.token);
    this.pos = openSession(this.clientOf(this.posOn), 'StartPayment', store.apiKey);
    let requested!: (asked: boolean) => void;
    this.appRequested = new Promise((resolve) => { requested = resolve; });
    // 60 s bounds every wait: longer than any window of the rig (pairing 10 s, idle 20 s) plus the outage.
    const bound = 60_000;
    const appSide = (async (): Promise<End> => {
      try {
        const request = await nextOrEnd(this.app, bound);
        if (request.content.state !== 'REQUEST_TRANSFER') {
          requested(false);
          return { code: request.common.res_code, message: request.common.res_message, tranNo: request.content.tran_no };
        }
        requested(true);
        await this.transferGate;
        const transfer = await signedTransfer(rig, this.user, request.content.settlement_address, request.content.token_amount);
        this.app.send({
          state: 'TRANSFER', tran_no: this.tranNo, transfer_key: transfer.tempKey, hash_key: transfer.hashKey,
          transfer_signature: transfer.signature, transfer_comment: request.content.transfer_comment,
        });
        return await endOf(this.app, bound);
      } catch (error) {
        requested(false);
        return { lost: (error as Error).message };
      }
    })();
    this.ends = Promise.all([appSide, endOf(this.pos, bound)]).then(([app, pos]) => ({ app, pos }));
    if (first !== 'pos') this.startApp();
    if (first !== 'app') this.startPos();
  }

  startApp(): void {
    if (this.appStarted) return;
    this.appStarted = true;
    this.app.send({ state: 'START_PAY', user_uuid: this.uuid });
  }

  startPos(): void {
    if (this.posStarted) return;
    this.posStarted = true;
    this.pos.send({
      state: 'START_PAY', tid: store.tid, tran_no: this.tranNo, exchange_amount: '2000', user_uuid: this.uuid,
      token_symbol: 'VIXP', user_address: this.user.address, expiration_time: String(Math.floor(Date.now() / 1000) + this.expiresInSeconds),
    });
  }

  close(): void {
    this.app?.call.cancel();
    this.pos?.call.cancel();
  }
}

/** Whether Redis holds the app of `uuid` as waiting (A's or B's registration reached it). */
async function appRegistered(uuid: string): Promise<boolean> {
  const client = createClient({ url: redis.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.keys(`*:app:${uuid}`)).length > 0;
  } finally {
    client.destroy();
  }
}
async function posRegistered(uuid: string): Promise<boolean> {
  const client = createClient({ url: redis.url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return (await client.keys(`*:pos:${uuid}`)).length > 0;
  } finally {
    client.destroy();
  }
}

/** The res_code a POS is told for a recorded failure code. */
const resCodeOf = (code: string | null | undefined) => (code ? (resCodeByFamily.payment as unknown as Record<string, { res_code: string }>)[code]?.res_code ?? code : '');

async function loginStatus(id: string, secret: string): Promise<{ status: number; body: string }> {
  const response = await fetch(`${rig.server.baseUrl}/v2/auth/auth-user`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, signal: AbortSignal.timeout(20_000), body: JSON.stringify({ id, password: secret }),
  });
  return { status: response.status, body: await response.text() };
}

async function readyz(): Promise<{ status: number; body: any }> {
  const response = await fetch(`${rig.server.baseUrl}/readyz`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: await response.json() };
}

test('Redis stopped ~8 s and started again during logins and POS/app pairs: no 500, every pairing ends once with one documented code on both streams, then logins and payments work and the chain agrees', { skip }, async (t) => {
  const began = Date.now();
  const mark = (what: string) => t.diagnostic(`${((Date.now() - began) / 1000).toFixed(1)} s: ${what}`);
  const users = await Promise.all(Array.from({ length: 9 }, () => rigUser(rig, 20)));
  const [u1, u2, u3, u4, u5, u6, u7, u8, u9] = users as [RigUser, RigUser, RigUser, RigUser, RigUser, RigUser, RigUser, RigUser, RigUser];
  const victim = await rigUser(rig, 0);
  assert.equal((await readyz()).status, 200, 'ready before the outage');

  // Logins on A all along: a right password each time, and a wrong one for another user.
  const logins: Array<{ right: boolean; status: number; body: string }> = [];
  // At most 15 wrong ones: with the brute force below that stays under the IP's limit (30 a window).
  let loggingIn = true;
  const loginLoop = (async () => {
    for (let round = 0; loggingIn; round++) {
      const attempt = (id: string, secret: string, right: boolean) => loginStatus(id, secret)
        .catch((error: Error) => ({ status: 0, body: error.message })).then((answer) => { logins.push({ right, ...answer }); });
      await Promise.all([attempt(u8.userId, password, true), ...(round % 3 === 0 && round < 45 ? [attempt(`nobody-${randomUUID()}`, 'wrong password', false)] : [])]);
      await sleep(250);
    }
  })();

  // Outage gate: the TRANSFERs of pairs paired before the outage are sent while Redis is down.
  let redisDown!: () => void;
  const down = new Promise<void>((resolve) => { redisDown = resolve; });
  const pairs: Pair[] = [
    // Redis comes back within their windows: they complete.
    new Pair('paired before, TRANSFER during the outage: app on A, POS on B', u1, { app: 'A', pos: 'B' }, '00', { transferGate: down }),
    new Pair('paired before, TRANSFER during the outage: app on B, POS on A', u2, { app: 'B', pos: 'A' }, '00', { transferGate: down }),
    new Pair('paired before, TRANSFER during the outage: both on A', u3, { app: 'A', pos: 'A' }, '00', { transferGate: down }),
    new Pair('app waiting on A before the outage, POS on B during it', u4, { app: 'A', pos: 'B' }, '00'),
    new Pair('POS waiting on A before the outage, app on B during it', u5, { app: 'B', pos: 'A' }, '00'),
    new Pair('both started during the outage: app on B, POS on A', u6, { app: 'B', pos: 'A' }, '00'),
    // The POS's window (its QR code's last 4 s) ends within the outage: 03 to the POS then, to the app once Redis answers.
    new Pair('app waiting on B before the outage, POS on A during it, its QR code expiring within it', u9, { app: 'B', pos: 'A' }, '03', { expiresInSeconds: 4 }),
  ];
  const [p1, p2, p3, p4, p5, p6, p7] = pairs as [Pair, Pair, Pair, Pair, Pair, Pair, Pair];
  /** Every way the outage broke its promise, reported together. */
  const failures: string[] = [];
  try {
    for (const p of [p1, p2, p3]) p.open('both');
    assert.deepEqual(await Promise.all([p1, p2, p3].map((p) => p.appRequested)), [true, true, true], 'the first three pairs are paired before the outage');
    p4.open('app');
    await waitFor(() => appRegistered(p4.uuid), { timeoutMs: 10_000, message: 'the app of the 4th pair waits in Redis' });
    p5.open('pos');
    await waitFor(() => posRegistered(p5.uuid), { timeoutMs: 10_000, message: 'the POS of the 5th pair waits in Redis' });
    p7.open('app');
    await waitFor(() => appRegistered(p7.uuid), { timeoutMs: 10_000, message: 'the app of the 7th pair waits in Redis' });

    mark('Redis stopped');
    await redis.stop();
    const stoppedAt = Date.now();
    redisDown();
    p4.startPos();
    p5.startApp();
    p7.startPos();
    p6.open('both');

    // While Redis is down: /readyz names it, and a brute force on one id is still throttled.
    const notReady = await waitFor(async () => { const r = await readyz(); return r.status === 503 ? r : undefined; },
      { timeoutMs: 5000, intervalMs: 100, message: '/readyz answers 503 while Redis is down' });
    assert.ok(notReady.body.down.includes('redis'), JSON.stringify(notReady.body));
    const guesses: number[] = [];
    for (let i = 0; i < 6; i++) guesses.push((await loginStatus(victim.userId, `guess ${i}`)).status);
    if (guesses.join() !== '401,401,401,401,401,429') failures.push(`a brute force while Redis is down: ${guesses.join()} (a sixth wrong password within the window is 429)`);

    await waitFor(() => Date.now() - stoppedAt >= 8000, { timeoutMs: 20_000, intervalMs: 100, message: '8 s of outage' });
    await redis.start();
    mark('Redis started');
    await waitFor(async () => (await readyz()).status === 200, { timeoutMs: 15_000, intervalMs: 100, message: '/readyz ready again once Redis is back' });

    for (const p of pairs) void p.ends.then(({ app, pos }) => mark(`${p.label}: ended (app ${app.code}, POS ${pos.code})`));
    const ends = await within(Promise.all(pairs.map((p) => p.ends)), 90_000, 'every pairing ends');
    mark('every pairing ended');
    loggingIn = false;
    await loginLoop;

    const records = await Promise.all(pairs.map((p) => rig.operator.payments.findPayment(store.tid, p.tranNo)));
    for (const [i, p] of pairs.entries()) {
      const { app, pos } = ends[i]!;
      const record = records[i];
      const heard = `${p.label}: app ${app.code ?? `lost (${app.lost})`}, POS ${pos.code ?? `lost (${pos.lost})`}, recorded ${record?.status} ${resCodeOf(record?.failureCode)}`;
      t.diagnostic(heard);
      if (!app.code || !pos.code) failures.push(`${heard}: a stream heard no END_PAY`);
      else if (app.code !== pos.code) failures.push(`${heard}: the two streams were told different codes`);
      else if (!['00', '01', '03', '10'].includes(pos.code)) failures.push(`${heard}: not a code docs/payments.md gives a pairing`);
      else if (pos.code === '00' ? record?.status !== 'approved' : record?.status !== 'failed' || resCodeOf(record.failureCode) !== pos.code) {
        failures.push(`${heard}: the record does not say what the POS was told`);
      }
      else if (pos.code !== p.expect) failures.push(`${heard}: expected ${p.expect}${p.expect === '00' ? ' (Redis came back within its windows)' : ''}`);
      // The app is told the POS's failure (its tran_no), not left to time out on its own much later.
      else if (pos.code !== '00' && app.tranNo !== p.tranNo) failures.push(`${heard}: the app's END_PAY names tran_no '${app.tranNo}', not the POS's: it was not told the POS's failure`);
    }
    const errors = logins.filter((l) => l.status >= 500 || l.status === 0);
    if (errors.length > 0) failures.push(`${errors.length} of ${logins.length} logins answered a 5xx or nothing: ${errors[0]!.status} ${errors[0]!.body.slice(0, 200)}`);
    const refused = logins.filter((l) => (l.right ? l.status !== 200 : l.status !== 401));
    if (refused.length > 0) failures.push(`${refused.length} logins were not answered 200 (right password) or 401 (wrong): ${refused.map((l) => l.status).join()}`);
    assert.deepEqual(failures, [], `\n${failures.join('\n')}\n${serverLog(rig)}`);

    // After Redis is back: a login, and a payment across the two instances.
    const after = await loginStatus(u7.userId, password);
    assert.equal(after.status, 200, after.body);
    const last = new Pair('after the outage: app on A, POS on B', u7, { app: 'A', pos: 'B' }, '00');
    pairs.push(last);
    last.open('both');
    const lastEnds = await last.ends;
    assert.deepEqual([lastEnds.app.code, lastEnds.pos.code], ['00', '00'], JSON.stringify(lastEnds));
  } finally {
    loggingIn = false;
    for (const p of pairs) p.close();
    await redis.start();
  }

  // The chain agrees: each approved payment's transfer is on chain exactly once, the others moved nothing.
  const chain = rig.operator.chains.ethereum;
  const transfers = await chain.client.getContractEvents({ address: rig.operator.contracts.ethereum.vixpToken, abi: vixpTokenAbi, eventName: 'Transfer', fromBlock: 0n });
  for (const p of pairs) {
    const record = await rig.operator.payments.findPayment(store.tid, p.tranNo);
    const moved = transfers.filter((t) => String(t.args.from).toLowerCase() === p.user.address.toLowerCase()
      && String(t.args.to).toLowerCase() === store.settlementAddress.toLowerCase()).length;
    assert.equal(moved, record?.status === 'approved' ? 1 : 0, `${p.label}: ${record?.status}, moved ${moved} times on chain`);
  }
  mark('the chain agrees');
  await assertInvariants(rig);
  mark('invariants hold');
});
