import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { DomainError, type DomainErrorCode } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { SessionEvent, TransferCredentials } from './payment-events.ts';
import type { AppArrival, AppConnection, PairedApp, PairingDesk } from './pairing-desk.ts';
import * as scripts from './redis-pairing-scripts.ts';

/**
 * A pairing desk over Redis: the app's DoPayment and the POS's StartPayment pair by user_uuid
 * whichever instances they reach. Same interface and failure codes as the in-process desk.
 *
 * - The app's instance registers the app under its user_uuid (state `waiting`, expiry = the app's
 *   wait) and keeps its stream; a POS's instance claims it atomically (`paired`), or registers as
 *   the one POS waiting for it and is told when it arrives.
 * - Each instance subscribes to one channel, `<prefix>:to:<instance id>`. Messages to the app
 *   (REQUEST_TRANSFER, END_PAY/END_REWARD, failures) go to the app's instance, which writes them to
 *   its stream; the app's TRANSFER and hang-up go to the POS's instance. Both sides on one instance
 *   skip Redis for the messages (the claim still goes through it).
 * - Timeouts run where the waiting side is (app wait: the app's instance; pairing window and
 *   TRANSFER wait: the POS's instance), exactly as in-process.
 */
export interface RedisPairingDesk extends PairingDesk {
  readonly instanceId: string;
  close(): Promise<void>;
}

export interface RedisPairingDeskOptions {
  url: string;
  /** How long an app waits for a POS (the idle timeout). */
  appWaitMs: number;
  /** Prefix of every key and channel; several deployments (or test runs) can share one Redis. */
  keyPrefix?: string;
  logger?: Logger;
}

interface PosRef { i: string; id: string }
interface AppValue { s: string; id: string; i: string; u: string; a: string; p?: PosRef }
interface WireError { code: DomainErrorCode; message: string; details?: string }
type WireEvent = Exclude<SessionEvent, { type: 'failed' }> | (Omit<Extract<SessionEvent, { type: 'failed' }>, 'error'> & { error: WireError });
type Message =
  | { k: 'event'; app: string; pos?: PosRef; event: WireEvent }
  | { k: 'arrived'; pos: string }
  | { k: 'transfer'; pos: string; c: TransferCredentials }
  | { k: 'hangup'; pos: string };

interface LocalApp {
  id: string;
  arrival: AppArrival;
  state: 'registering' | 'waiting' | 'done';
  registered: Promise<boolean>;
  /** The app's TRANSFER and hang-up, forwarded one after the other (after its registration). */
  queue: Promise<unknown>;
  pos?: PosRef;
  hungUp: boolean;
  transferSent: boolean;
  idleTimer?: NodeJS.Timeout;
}

interface PosSession {
  ref: PosRef;
  waiting: boolean;
  transfer?: TransferCredentials;
  hungUp: boolean;
  waiter?: { resolve(c: TransferCredentials): void; reject(e: unknown): void };
  arrived?: () => void;
  /** The app arrived before this POS began to listen for it. */
  arrivedEarly?: boolean;
}

const isTerminal = (event: SessionEvent) => event.type === 'end_pay' || event.type === 'end_reward' || event.type === 'failed';
const canceled = () => new DomainError('payment.canceled_by_user', 'the payment was canceled before the transfer');
const expired = (why: string) => new DomainError('payment.expired', why);

const toWire = (event: SessionEvent): WireEvent => (event.type === 'failed'
  ? { ...event, error: { code: event.error.code, message: event.error.message, ...(event.error.details !== undefined && { details: event.error.details }) } }
  : event);
const fromWire = (event: WireEvent): SessionEvent => (event.type === 'failed'
  ? { ...event, error: new DomainError(event.error.code, event.error.message, event.error.details !== undefined ? { details: event.error.details } : {}) }
  : event);

export async function createRedisPairingDesk(options: RedisPairingDeskOptions): Promise<RedisPairingDesk> {
  const prefix = options.keyPrefix ?? 'vixpay:pairing';
  const instanceId = randomUUID();
  const appKey = (userUuid: string) => `${prefix}:app:${userUuid}`;
  const posKey = (userUuid: string) => `${prefix}:pos:${userUuid}`;
  const channelOf = (instance: string) => `${prefix}:to:${instance}`;
  const waitingTtlMs = options.appWaitMs + 10_000;
  const pairedTtlMs = 2 * options.appWaitMs + 5 * 60_000;
  const logError = (error: unknown, what: string) => options.logger?.error({ err: error }, `redis pairing desk: ${what}`);

  const client = createClient({ url: options.url });
  client.on('error', (error: unknown) => logError(error, 'connection error'));
  const subscriber = client.duplicate();
  subscriber.on('error', (error: unknown) => logError(error, 'subscriber connection error'));
  await client.connect();
  try {
    await subscriber.connect();
  } catch (error) {
    await client.close();
    throw error;
  }

  let closed = false;
  const apps = new Map<string, LocalApp>();
  const sessions = new Map<string, PosSession>();

  const run = async (script: string, keys: string[], args: Array<string | number> = []): Promise<unknown> =>
    client.eval(script, { keys, arguments: args.map(String) });

  function deliver(instance: string, message: Message): void {
    if (instance === instanceId) {
      queueMicrotask(() => receive(message));
      return;
    }
    client.publish(channelOf(instance), JSON.stringify(message)).catch((error: unknown) => logError(error, 'publish failed'));
  }

  function receive(message: Message): void {
    switch (message.k) {
      case 'event': {
        const app = apps.get(message.app);
        if (!app || app.state === 'done') return;
        if (message.pos) app.pos = message.pos;
        if (!app.hungUp) clearTimeout(app.idleTimer);
        const event = fromWire(message.event);
        if (isTerminal(event)) finishApp(app);
        app.arrival.sink.send(event);
        return;
      }
      case 'arrived': {
        const session = sessions.get(message.pos);
        if (session?.arrived) session.arrived();
        else if (session) session.arrivedEarly = true;
        return;
      }
      case 'transfer': {
        const session = sessions.get(message.pos);
        if (!session || session.transfer) return;
        session.transfer = message.c;
        session.waiter?.resolve(message.c);
        return;
      }
      case 'hangup': {
        const session = sessions.get(message.pos);
        if (!session || session.hungUp) return;
        session.hungUp = true;
        if (!session.transfer) session.waiter?.reject(canceled());
      }
    }
  }

  await subscriber.subscribe(channelOf(instanceId), (text: string) => {
    try {
      receive(JSON.parse(text) as Message);
    } catch (error) {
      logError(error, 'bad message');
    }
  });

  function finishApp(app: LocalApp): void {
    app.state = 'done';
    clearTimeout(app.idleTimer);
    apps.delete(app.id);
  }

  function pairedApp(session: PosSession, value: AppValue, key: string): PairedApp {
    return {
      userId: value.u,
      userAddress: value.a,
      send: (event) => {
        if (isTerminal(event)) {
          // The app's payment is over: its user_uuid is free again, and this POS session too.
          sessions.delete(session.ref.id);
          run(scripts.releaseApp, [key], [value.id]).catch((error: unknown) => logError(error, 'release failed'));
        }
        deliver(value.i, { k: 'event', app: value.id, pos: session.ref, event: toWire(event) });
      },
      awaitTransfer: (timeoutMs, signal) => new Promise<TransferCredentials>((resolve, reject) => {
        if (session.transfer) return resolve(session.transfer);
        if (session.hungUp || signal.aborted) return reject(canceled());
        const timer = setTimeout(() => finish(() => reject(expired('no TRANSFER from the app within the time allowed'))), timeoutMs);
        const onAbort = () => finish(() => reject(canceled()));
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          session.waiter = undefined;
          settle();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        session.waiter = { resolve: (c) => finish(() => resolve(c)), reject: (e) => finish(() => reject(e)) };
      }),
    };
  }

  async function takeApp(userUuid: string, windowMs: number, signal: AbortSignal): Promise<PairedApp> {
    const ref: PosRef = { i: instanceId, id: randomUUID() };
    const refText = JSON.stringify(ref);
    const session: PosSession = { ref, waiting: false, hungUp: false };
    // Registered before the claim: the app may hang up the moment it is claimed.
    sessions.set(ref.id, session);
    const outcome = async (reply: unknown): Promise<PairedApp | undefined> => {
      const [result, value] = reply as [string, string?];
      if (result === 'paired') return pairedApp(session, JSON.parse(value!) as AppValue, appKey(userUuid));
      if (result === 'departed') throw canceled();
      if (result === 'busy') throw new DomainError('request.invalid', 'this user_uuid is already in a payment', { details: 'user_uuid' });
      if (result === 'pos_busy') throw new DomainError('request.invalid', 'another POS is already waiting for this user_uuid', { details: 'user_uuid' });
      return undefined;
    };
    let waitingKeySet = false;
    try {
      const first = await run(scripts.takeApp, [appKey(userUuid), posKey(userUuid)], [refText, pairedTtlMs, Math.max(1, Math.ceil(windowMs))]);
      waitingKeySet = (first as string[])[0] === 'waiting';
      const paired = await outcome(first);
      if (paired) return paired;
      return await new Promise<PairedApp>((resolve, reject) => {
        if (signal.aborted) return reject(canceled());
        session.waiting = true;
        let claiming = false;
        let pending: (() => void) | undefined;
        const timer = setTimeout(() => settle(() => reject(expired('the app did not connect within the pairing window'))), windowMs);
        const onAbort = () => settle(() => reject(canceled()));
        const stop = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          session.waiting = false;
          session.arrived = undefined;
        };
        // A timeout or abort while a claim is running waits for it: an app claimed is an app paired.
        const settle = (done: () => void) => {
          if (claiming) { pending ??= done; return; }
          stop();
          done();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        session.arrived = () => {
          if (claiming || !session.waiting) return;
          claiming = true;
          run(scripts.claimApp, [appKey(userUuid)], [refText, pairedTtlMs]).then(outcome).then((app) => {
            claiming = false;
            if (app) { stop(); resolve(app); } else if (pending) { stop(); pending(); }
          }, (error: unknown) => { claiming = false; stop(); reject(error); });
        };
        if (session.arrivedEarly) session.arrived();
      });
    } catch (error) {
      sessions.delete(ref.id);
      throw error;
    } finally {
      if (waitingKeySet) run(scripts.deleteIfEqual, [posKey(userUuid)], [refText]).catch((error: unknown) => logError(error, 'cleanup failed'));
    }
  }

  function connectApp(arrival: AppArrival): AppConnection {
    const id = randomUUID();
    const key = appKey(arrival.userUuid);
    const value: AppValue = { s: 'waiting', id, i: instanceId, u: arrival.userId, a: arrival.userAddress };
    const app: LocalApp = { id, arrival, state: 'registering', registered: Promise.resolve(false), queue: Promise.resolve(), hungUp: false, transferSent: false };
    apps.set(id, app);
    const fail = (error: DomainError) => {
      finishApp(app);
      arrival.sink.send({ type: 'failed', error });
    };
    app.registered = run(scripts.registerApp, [key, posKey(arrival.userUuid)], [JSON.stringify(value), waitingTtlMs]).then((reply) => {
      const [result, pos] = reply as [string, string?];
      if (result === 'busy') {
        fail(new DomainError('request.invalid', 'this user_uuid is already in use by another DoPayment', { details: 'user_uuid' }));
        return false;
      }
      if (app.state === 'registering') app.state = 'waiting';
      if (pos) {
        const ref = JSON.parse(pos) as PosRef;
        deliver(ref.i, { k: 'arrived', pos: ref.id });
      }
      if (app.state === 'waiting' && !app.hungUp) {
        app.idleTimer = setTimeout(() => {
          run(scripts.expireApp, [key], [id]).then((gone) => {
            if (gone === 1 && app.state === 'waiting' && !app.hungUp) fail(expired('no POS started a payment for this user_uuid in time'));
          }, (error: unknown) => logError(error, 'expiry failed'));
        }, options.appWaitMs);
      }
      return true;
    }, (error: unknown) => {
      logError(error, 'register failed');
      fail(new DomainError('internal', 'the pairing desk is unavailable', { cause: error }));
      return false;
    });

    app.queue = app.registered;
    const enqueue = (step: (registered: boolean) => Promise<void>, what: string) => {
      app.queue = app.queue.then(() => app.registered).then(step).catch((error: unknown) => logError(error, what));
    };

    async function posOf(): Promise<PosRef | undefined> {
      if (app.pos) return app.pos;
      const text = await client.get(key);
      const current = text ? JSON.parse(text) as AppValue : undefined;
      return current?.id === id && current.s === 'paired' ? current.p : undefined;
    }

    return {
      submitTransfer(credentials) {
        enqueue(async (ok) => {
          if (!ok || app.transferSent) return;
          const pos = await posOf();
          if (!pos) {
            arrival.sink.send({ type: 'failed', error: new DomainError('request.invalid', 'TRANSFER before REQUEST_TRANSFER', { details: 'state' }) });
            return;
          }
          app.transferSent = true;
          deliver(pos.i, { k: 'transfer', pos: pos.id, c: credentials });
        }, 'transfer forwarding failed');
      },
      hangUp() {
        if (app.hungUp) return;
        app.hungUp = true;
        clearTimeout(app.idleTimer);
        const wasDone = app.state === 'done';
        enqueue(async (ok) => {
          if (!ok || wasDone) return;
          const reply = await run(scripts.leaveApp, [key], [id, options.appWaitMs]);
          if (typeof reply !== 'string') {
            finishApp(app);
            return;
          }
          // Paired: the POS's flow still ends this stream (01, or END_PAY after a TRANSFER).
          app.idleTimer = setTimeout(() => finishApp(app), pairedTtlMs);
          app.idleTimer.unref();
          if (!app.transferSent) {
            const pos = JSON.parse(reply) as PosRef;
            deliver(pos.i, { k: 'hangup', pos: pos.id });
          }
        }, 'hang-up forwarding failed');
      },
    };
  }

  return {
    instanceId,
    connectApp,
    takeApp,
    failWaitingApp(userUuid, failure) {
      run(scripts.failWaitingApp, [appKey(userUuid)]).then((reply) => {
        if (typeof reply !== 'string') return;
        const value = JSON.parse(reply) as AppValue;
        deliver(value.i, { k: 'event', app: value.id, event: toWire({ type: 'failed', ...failure }) });
      }).catch((error: unknown) => logError(error, 'failWaitingApp failed'));
    },
    size: () => ({
      apps: [...apps.values()].filter((app) => app.state === 'waiting' && !app.hungUp).length,
      pos: [...sessions.values()].filter((session) => session.waiting).length,
    }),
    async close() {
      if (closed) return;
      closed = true;
      for (const app of apps.values()) clearTimeout(app.idleTimer);
      await subscriber.unsubscribe().catch(() => undefined);
      await Promise.allSettled([subscriber.close(), client.close()]);
    },
  };
}
