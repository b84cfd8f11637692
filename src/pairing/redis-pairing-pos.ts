import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PairedApp, PairingDesk } from './pairing-desk.ts';
import type { SessionEvent } from './session-events.ts';
import {
  canceled, createTransferHandoff, endsStream, pairingWindowExpired, posAlreadyWaiting, userUuidInPayment, waitWithin,
  type Settle, type TransferHandoff,
} from './pairing-rules.ts';
import { ErrorReply } from 'redis';
import { isDomainError } from '#shared/errors.ts';
import { RedisUnreachableError, type PairingLink } from './redis-pairing-link.ts';
import * as scripts from './redis-pairing-scripts.ts';
import { keyLifetimes, toWire, type AppValue, type PosMessage, type PosRef } from './redis-pairing-wire.ts';

/**
 * The POS side of the Redis pairing desk, on the instance that holds the POS's stream: claims the
 * app (or waits for it within the pairing window), sends the app its events through the app's
 * instance, and hands the app's TRANSFER and hang-up, sent from there, to the POS's flow.
 *
 * While Redis does not answer, the POS's steps are tried again within its pairing window (a window
 * that ends first is 03, as when the app did not come); once Redis answers again every POS still
 * waiting for its app claims it or registers its wait anew (a restarted Redis lost its key, and the
 * app's word that it arrived may have been lost with it).
 */
export interface RedisPosSide extends Pick<PairingDesk, 'takeApp' | 'failWaitingApp' | 'approveWaitingApp'> {
  receive(message: PosMessage): void;
}

interface PosSession {
  ref: PosRef;
  handoff: TransferHandoff;
  /** Set while the POS waits for its app: claim it now. */
  arrived?: () => void;
  /** The app arrived before this POS began to listen for it. */
  arrivedEarly?: boolean;
  /** Set while the POS waits for its app: Redis answers again, claim the app or register the wait anew. */
  reassert?: () => void;
  /** Stops watching the app's instance (paired across instances). */
  unwatch?: () => void;
}

/** How long after Redis answers again an app waiting elsewhere may take to be registered anew (a few heartbeats). */
const reregisterMs = 5000;

export function createRedisPosSide(link: PairingLink, appWaitMs: number): RedisPosSide {
  const { pairedMs } = keyLifetimes(appWaitMs);
  const sessions = new Map<string, PosSession>();
  /**
   * POS sessions that gave up without pairing, by user_uuid, until the app is let go: a claim of
   * theirs Redis ran but whose reply was lost (the connection dropped) left that app paired to them.
   */
  const abandoned = new Map<string, string>();
  const logFailure = (what: string) => (error: unknown) => link.logError(error, what);

  /**
   * An app still waiting (on any instance) is told `event` and let go. While Redis does not answer it
   * is asked again; once Redis answers after such a wait, the app's instance may not have registered
   * it again yet (a restarted Redis lost its key): asked again for `reregisterMs`, for an app that
   * arrived before this failure only (never one that came for a new attempt since).
   */
  function releaseWaiting(userUuid: string, event: SessionEvent): void {
    const gaveUp = abandoned.get(userUuid);
    abandoned.delete(userUuid);
    const failedAt = Date.now();
    const args = [gaveUp ?? '', failedAt];
    const tell = (reply: unknown) => {
      if (typeof reply !== 'string') return false;
      const value = JSON.parse(reply) as AppValue;
      link.deliver(value.i, { k: 'event', app: value.id, event: toWire(event) });
      return true;
    };
    const release = async () => {
      const first = await link.run(scripts.failWaitingApp, [link.appKey(userUuid)], [gaveUp ?? '']).then((reply) => ({ reply }), () => undefined);
      if (first) return tell(first.reply);
      if (tell(await link.runSteadily(scripts.failWaitingApp, [link.appKey(userUuid)], args, { until: failedAt + appWaitMs }))) return true;
      for (const until = Date.now() + reregisterMs; Date.now() < until;) {
        await sleep(reregisterMs / 10);
        if (tell(await link.run(scripts.failWaitingApp, [link.appKey(userUuid)], args).catch(() => undefined))) return true;
      }
      return false;
    };
    release().catch(logFailure('releasing a waiting app failed'));
  }

  function pairedApp(session: PosSession, userUuid: string, value: AppValue): PairedApp {
    // The app's instance dying is its stream ending: a hang-up (01 before its TRANSFER; after it the
    // payment completes, as after any hang-up).
    session.unwatch = link.watchPeer(value.i, () => session.handoff.hangUp());
    return {
      userId: value.u,
      userAddress: value.a,
      send: (event) => {
        if (endsStream(event)) {
          // The app's payment is over: its user_uuid is free again, and this POS session too.
          sessions.delete(session.ref.id);
          session.unwatch?.();
          // Asked again while Redis does not answer: a key left paired would refuse the user's next payment (11).
          link.runSteadily(scripts.releaseApp, [link.appKey(userUuid)], [value.id], { until: Date.now() + pairedMs }).catch(logFailure('release failed'));
        }
        link.deliver(value.i, { k: 'event', app: value.id, pos: session.ref, event: toWire(event) });
      },
      awaitTransfer: (timeoutMs, signal) => session.handoff.await(timeoutMs, signal),
    };
  }

  /** A claim's answer: the app paired, a refusal (thrown), or undefined when there is no app to claim yet. */
  function claimed(reply: unknown, session: PosSession, userUuid: string): PairedApp | undefined {
    const [result, value] = reply as [string, string?];
    if (result === 'paired') return pairedApp(session, userUuid, JSON.parse(value!) as AppValue);
    if (result === 'departed') throw canceled();
    if (result === 'busy') throw userUuidInPayment();
    if (result === 'pos_busy') throw posAlreadyWaiting();
    return undefined;
  }

  /**
   * Waits until `until` (the window's end) for the app's instance to say the app arrived, then
   * claims it. A timeout or abort while a claim is running waits for it: an app claimed is an app
   * paired. A claim Redis did not answer is tried again once it answers (`reassert`).
   */
  function awaitArrival(session: PosSession, userUuid: string, until: number, signal: AbortSignal): Promise<PairedApp> {
    const refText = JSON.stringify(session.ref);
    return waitWithin(Math.max(0, until - Date.now()), signal, pairingWindowExpired, (settle: Settle<PairedApp>) => {
      let claiming = false;
      let again: (() => void) | undefined;
      let interruption: (() => void) | undefined;
      const attempt = (run: () => Promise<unknown>) => {
        if (claiming) {
          again = () => attempt(run);
          return;
        }
        claiming = true;
        run()
          .then((reply) => claimed(reply, session, userUuid))
          .then((app) => {
            claiming = false;
            if (app) return settle.resolve(app);
            const next = again;
            again = undefined;
            if (next && !interruption) next();
            else interruption?.();
          }, (error: unknown) => {
            claiming = false;
            if (isDomainError(error) || error instanceof ErrorReply) return settle.reject(error);
            // Redis unreachable: claimed (or registered anew) once it answers again.
            link.logError(error, 'claim failed');
            interruption?.();
          });
      };
      session.arrived = () => attempt(() => link.run(scripts.claimApp, [link.appKey(userUuid)], [refText, pairedMs]));
      session.reassert = () => attempt(() => link.run(scripts.takeApp, [link.appKey(userUuid), link.posKey(userUuid)],
        [refText, pairedMs, Math.max(1, Math.ceil(until - Date.now()))]));
      if (session.arrivedEarly) session.arrived();
      return {
        stop: () => {
          session.arrived = undefined;
          session.reassert = undefined;
        },
        interrupted: (fail) => {
          if (claiming) interruption ??= fail;
          else fail();
        },
      };
    });
  }

  link.onReconnect(() => {
    for (const session of sessions.values()) session.reassert?.();
  });

  return {
    async takeApp(userUuid, windowMs, signal) {
      const session: PosSession = { ref: { i: link.instanceId, id: randomUUID() }, handoff: createTransferHandoff() };
      const refText = JSON.stringify(session.ref);
      // Registered before the claim: the app may hang up the moment it is claimed.
      sessions.set(session.ref.id, session);
      let waitingKeySet = false;
      const until = Date.now() + windowMs;
      try {
        // Redis unreachable: asked again within the window (its end while Redis is still away is 03, an abort 01).
        const reply = await link.runSteadily(scripts.takeApp, [link.appKey(userUuid), link.posKey(userUuid)], [refText, pairedMs, Math.max(1, Math.ceil(windowMs))], { until, signal })
          .catch((error: unknown) => {
            if (!(error instanceof RedisUnreachableError)) throw error;
            throw signal.aborted ? canceled() : pairingWindowExpired();
          });
        waitingKeySet = (reply as string[])[0] === 'waiting';
        return claimed(reply, session, userUuid) ?? await awaitArrival(session, userUuid, until, signal);
      } catch (error) {
        sessions.delete(session.ref.id);
        session.unwatch?.();
        abandoned.set(userUuid, session.ref.id);
        // Let go with the POS's failure (failWaitingApp) right after; forgotten if nobody does.
        setTimeout(() => { if (abandoned.get(userUuid) === session.ref.id) abandoned.delete(userUuid); }, 60_000).unref();
        throw error;
      } finally {
        if (waitingKeySet) link.run(scripts.deleteIfEqual, [link.posKey(userUuid)], [refText]).catch(logFailure('cleanup failed'));
      }
    },

    failWaitingApp(userUuid, failure) {
      releaseWaiting(userUuid, { type: 'failed', ...failure });
    },

    approveWaitingApp(userUuid, event) {
      releaseWaiting(userUuid, event);
    },

    receive(message) {
      const session = sessions.get(message.pos);
      if (!session) return;
      if (message.k === 'transfer') session.handoff.submit(message.c);
      else if (message.k === 'hangup') session.handoff.hangUp();
      else if (session.arrived) session.arrived();
      else session.arrivedEarly = true;
    },
  };
}
