import { randomUUID } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import type { TransferCredentials } from './session-events.ts';
import type { AppArrival, AppConnection } from './pairing-desk.ts';
import { appWaitExpired, canceled, endsStream, posInstanceLost, transferBeforeRequest, userUuidInUse } from './pairing-rules.ts';
import { RedisUnreachableError, type PairingLink } from './redis-pairing-link.ts';
import * as scripts from './redis-pairing-scripts.ts';
import { fromWire, keyLifetimes, type AppMessage, type AppValue, type PosRef } from './redis-pairing-wire.ts';

/**
 * The app side of the Redis pairing desk, on the instance that holds the app's stream: registers
 * the app under its user_uuid, runs the app's wait for a POS, writes what the POS's instance sends
 * to the app's stream, and forwards the app's TRANSFER and hang-up to the POS's instance.
 *
 * While Redis does not answer, the app's registration and its steps are tried again within its wait
 * (an app that waited its whole wait hears 03, as when no POS came); once Redis answers again every
 * app still waiting for a POS is registered anew (a Redis that restarted lost its key).
 */
export interface RedisAppSide {
  connectApp(arrival: AppArrival): AppConnection;
  receive(message: AppMessage): void;
  close(): void;
}

interface LocalApp {
  id: string;
  arrival: AppArrival;
  /** Its value in Redis while it waits. */
  value: AppValue;
  /** Until when its registration is tried while Redis does not answer (epoch ms): one wait from its START_PAY. */
  waitEnds: number;
  /** Aborted when the app hangs up: its registration is no longer tried. */
  left: AbortController;
  state: 'registering' | 'waiting' | 'done';
  /** Whether Redis took the app (false: refused or unreachable, the app was told). */
  registered: Promise<boolean>;
  /** The app's TRANSFER and hang-up, forwarded one after the other (after its registration). */
  queue: Promise<unknown>;
  pos?: PosRef;
  hungUp: boolean;
  transferSent: boolean;
  idleTimer?: NodeJS.Timeout;
  /** Stops watching the POS's instance (paired across instances). */
  unwatch?: () => void;
}

export function createRedisAppSide(link: PairingLink, appWaitMs: number): RedisAppSide {
  const lifetimes = keyLifetimes(appWaitMs);
  const apps = new Map<string, LocalApp>();

  function finish(app: LocalApp): void {
    app.state = 'done';
    clearTimeout(app.idleTimer);
    app.unwatch?.();
    apps.delete(app.id);
  }

  /**
   * The POS's instance died while paired: before the app's TRANSFER that is the POS's call ending
   * (01, as when a POS cancels); after it the payment's outcome is not known here (10: the POS's
   * retry of the tran_no settles it). The user_uuid is freed for the next attempt.
   */
  function posInstanceDied(app: LocalApp): void {
    if (app.state === 'done') return;
    // Released before the app hears it: its next DoPayment finds the user_uuid free.
    link.run(scripts.releaseApp, [link.appKey(app.arrival.userUuid)], [app.id])
      .catch((error: unknown) => link.logError(error, 'release failed'))
      .finally(() => { if (app.state !== 'done') fail(app, app.transferSent ? posInstanceLost() : canceled()); });
  }

  function watchPos(app: LocalApp, pos: PosRef): void {
    app.unwatch ??= link.watchPeer(pos.i, () => posInstanceDied(app));
  }

  function fail(app: LocalApp, error: DomainError): void {
    finish(app);
    app.arrival.sink.send({ type: 'failed', error });
  }

  /** The POS waiting for `app` (a reply of registerApp), told that the app is here. */
  function tellWaitingPos(pos: string | undefined): void {
    if (!pos) return;
    const ref = JSON.parse(pos) as PosRef;
    link.deliver(ref.i, { k: 'arrived', pos: ref.id });
  }

  /**
   * Registers the app in Redis, tells a POS already waiting for it, and starts the app's wait. Redis
   * unreachable: tried again until the app's wait ends (then 03) or it hangs up.
   */
  async function register(app: LocalApp): Promise<boolean> {
    const { userUuid } = app.arrival;
    let reply: unknown;
    try {
      reply = await link.runSteadily(scripts.registerApp, [link.appKey(userUuid), link.posKey(userUuid)], [JSON.stringify(app.value), lifetimes.waitingMs],
        { until: app.waitEnds, signal: app.left.signal });
    } catch (error) {
      if (error instanceof RedisUnreachableError) {
        if (!app.hungUp) fail(app, appWaitExpired());
        else finish(app);
        return false;
      }
      link.logError(error, 'register failed');
      fail(app, new DomainError('internal', 'the pairing desk is unavailable', { cause: error }));
      return false;
    }
    const [result, pos] = reply as [string, string?];
    if (result === 'busy') {
      fail(app, userUuidInUse());
      return false;
    }
    if (app.state === 'registering') app.state = 'waiting';
    tellWaitingPos(pos);
    if (app.state === 'waiting' && !app.hungUp) waitForPos(app);
    return true;
  }

  /** Redis answers again: an app still waiting for a POS is registered anew (a restarted Redis lost its key). */
  function reassert(app: LocalApp): void {
    const { userUuid } = app.arrival;
    link.run(scripts.registerApp, [link.appKey(userUuid), link.posKey(userUuid)], [JSON.stringify(app.value), lifetimes.waitingMs]).then((reply) => {
      const [result, pos] = reply as [string, string?];
      if (result === 'busy') link.logError(new Error(`user_uuid ${userUuid} was taken by another app while Redis was unreachable`), 'register again failed');
      else tellWaitingPos(pos);
    }, (error: unknown) => link.logError(error, 'register again failed'));
  }

  /**
   * No POS in time: 03, unless a POS claimed the app meanwhile (Redis decides; while it does not
   * answer it is asked again, for at most another wait, then 03).
   */
  function waitForPos(app: LocalApp): void {
    app.idleTimer = setTimeout(() => {
      link.runSteadily(scripts.expireApp, [link.appKey(app.arrival.userUuid)], [app.id], { until: Date.now() + appWaitMs }).then(async (gone) => {
        if (gone === 1 && app.state === 'waiting' && !app.hungUp) fail(app, appWaitExpired());
        // Claimed, but no word from the POS yet: watch its instance from now on.
        if (gone === 0 && app.state !== 'done') {
          const pos = await posOf(app);
          if (pos) watchPos(app, pos);
        }
      }, (error: unknown) => {
        link.logError(error, 'expiry failed');
        if (app.state === 'waiting' && !app.hungUp && !app.pos) fail(app, appWaitExpired());
      });
    }, appWaitMs);
  }

  function enqueue(app: LocalApp, step: (registered: boolean) => Promise<void>, what: string): void {
    app.queue = app.queue.then(() => app.registered).then(step).catch((error: unknown) => link.logError(error, what));
  }

  /** The POS that paired the app: known from its first message, else from the app key. */
  async function posOf(app: LocalApp): Promise<PosRef | undefined> {
    if (app.pos) return app.pos;
    const current = await link.readApp(app.arrival.userUuid);
    return current?.id === app.id && current.s === 'paired' ? current.p : undefined;
  }

  function submitTransfer(app: LocalApp, credentials: TransferCredentials): void {
    enqueue(app, async (registered) => {
      if (!registered || app.transferSent) return;
      const pos = await posOf(app);
      if (!pos) {
        app.arrival.sink.send({ type: 'failed', error: transferBeforeRequest() });
        return;
      }
      app.transferSent = true;
      link.deliver(pos.i, { k: 'transfer', pos: pos.id, c: credentials });
    }, 'transfer forwarding failed');
  }

  function hangUp(app: LocalApp): void {
    if (app.hungUp) return;
    app.hungUp = true;
    app.left.abort();
    clearTimeout(app.idleTimer);
    const wasDone = app.state === 'done';
    enqueue(app, async (registered) => {
      if (!registered || wasDone) return;
      // Its POS (if one paired it) must hear it: asked again while Redis does not answer.
      const reply = await link.runSteadily(scripts.leaveApp, [link.appKey(app.arrival.userUuid)], [app.id, appWaitMs], { until: Date.now() + appWaitMs });
      if (typeof reply !== 'string') {
        finish(app);
        return;
      }
      // Paired: the POS's flow still ends this stream (01, or END_PAY after a TRANSFER).
      app.idleTimer = setTimeout(() => finish(app), lifetimes.pairedMs);
      app.idleTimer.unref();
      if (!app.transferSent) {
        const pos = JSON.parse(reply) as PosRef;
        link.deliver(pos.i, { k: 'hangup', pos: pos.id });
      }
    }, 'hang-up forwarding failed');
  }

  link.onReconnect(() => {
    for (const app of apps.values()) if (app.state === 'waiting' && !app.hungUp && !app.pos) reassert(app);
  });

  return {
    connectApp(arrival) {
      const id = randomUUID();
      const app: LocalApp = {
        id, arrival, value: { s: 'waiting', id, i: link.instanceId, u: arrival.userId, a: arrival.userAddress, t: Date.now() },
        waitEnds: Date.now() + appWaitMs, left: new AbortController(),
        state: 'registering', registered: Promise.resolve(false), queue: Promise.resolve(), hungUp: false, transferSent: false,
      };
      apps.set(app.id, app);
      app.registered = register(app);
      app.queue = app.registered;
      return {
        submitTransfer: (credentials) => submitTransfer(app, credentials),
        hangUp: () => hangUp(app),
      };
    },

    receive(message) {
      const app = apps.get(message.app);
      if (!app || app.state === 'done') return;
      if (message.pos) app.pos = message.pos;
      if (app.pos) watchPos(app, app.pos);
      if (!app.hungUp) clearTimeout(app.idleTimer);
      const event = fromWire(message.event);
      if (endsStream(event)) finish(app);
      app.arrival.sink.send(event);
    },

    close() {
      for (const app of apps.values()) clearTimeout(app.idleTimer);
    },
  };
}
