import { DomainError } from '../shared/errors.ts';
import type { SessionEvent, SessionSink, TransferCredentials } from './payment-events.ts';

/** The app's DoPayment START_PAY, after its JWT was verified and its wallet looked up. */
export interface AppArrival {
  userUuid: string;
  userId: string;
  userAddress: string;
  sink: SessionSink;
}

/** What the transport holds for an app stream: it forwards TRANSFER and hang-ups. */
export interface AppConnection {
  submitTransfer(credentials: TransferCredentials): void;
  /** The app's stream ended or was cancelled. */
  hangUp(): void;
}

/** The app as the POS-side flow sees it once paired. */
export interface PairedApp {
  userId: string;
  userAddress: string;
  send(event: SessionEvent): void;
  /** Resolves with the app's TRANSFER; rejects with 01 on hang-up, with 03 after `timeoutMs`. */
  awaitTransfer(timeoutMs: number, signal: AbortSignal): Promise<TransferCredentials>;
}

/**
 * Pairs an app's DoPayment with a POS's StartPayment by `user_uuid`, whichever arrives first. An
 * app waits up to `appWaitMs` for a POS; a POS waits up to the window it asks for.
 * `createPairingDesk` is in-process (both streams of a user_uuid on one instance);
 * `createRedisPairingDesk` (redis-pairing-desk.ts) pairs them across instances.
 */
export interface PairingDesk {
  connectApp(arrival: AppArrival): AppConnection;
  takeApp(userUuid: string, windowMs: number, signal: AbortSignal): Promise<PairedApp>;
  /** Tells an app still waiting for this user_uuid that the POS's attempt failed, and lets it go. */
  failWaitingApp(userUuid: string, failure: Omit<Extract<SessionEvent, { type: 'failed' }>, 'type'>): void;
  /** Apps waiting and POS waiting (for tests and metrics). */
  size(): { apps: number; pos: number };
}

interface AppEntry {
  arrival: AppArrival;
  paired: boolean;
  hungUp: boolean;
  transfer?: TransferCredentials;
  waiter?: { resolve(c: TransferCredentials): void; reject(e: unknown): void };
  idleTimer?: NodeJS.Timeout;
}

const canceled = () => new DomainError('payment.canceled_by_user', 'the payment was canceled before the transfer');
const expired = (why: string) => new DomainError('payment.expired', why);

export function createPairingDesk(options: { appWaitMs: number }): PairingDesk {
  const apps = new Map<string, AppEntry>();
  const waitingPos = new Map<string, (entry: AppEntry) => void>();
  // Apps that hung up before any POS came: a POS arriving for them soon after is told 01 at once.
  const departed = new Set<string>();

  function pair(entry: AppEntry): PairedApp {
    entry.paired = true;
    clearTimeout(entry.idleTimer);
    const { arrival } = entry;
    return {
      userId: arrival.userId,
      userAddress: arrival.userAddress,
      send: (event) => {
        if (event.type !== 'request_transfer') apps.delete(arrival.userUuid);
        arrival.sink.send(event);
      },
      awaitTransfer: (timeoutMs, signal) => new Promise<TransferCredentials>((resolve, reject) => {
        if (entry.transfer) return resolve(entry.transfer);
        if (entry.hungUp || signal.aborted) return reject(canceled());
        const timer = setTimeout(() => finish(() => reject(expired('no TRANSFER from the app within the time allowed'))), timeoutMs);
        const onAbort = () => finish(() => reject(canceled()));
        const finish = (settle: () => void) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          entry.waiter = undefined;
          settle();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        entry.waiter = { resolve: (c) => finish(() => resolve(c)), reject: (e) => finish(() => reject(e)) };
      }),
    };
  }

  return {
    connectApp(arrival) {
      const live = apps.get(arrival.userUuid);
      if (live && !live.hungUp) throw new DomainError('request.invalid', 'this user_uuid is already in use by another DoPayment', { details: 'user_uuid' });
      const entry: AppEntry = { arrival, paired: false, hungUp: false };
      departed.delete(arrival.userUuid);
      apps.set(arrival.userUuid, entry);
      const pos = waitingPos.get(arrival.userUuid);
      if (pos) {
        waitingPos.delete(arrival.userUuid);
        pos(entry);
      } else {
        entry.idleTimer = setTimeout(() => {
          if (entry.paired || apps.get(arrival.userUuid) !== entry) return;
          apps.delete(arrival.userUuid);
          arrival.sink.send({ type: 'failed', error: expired('no POS started a payment for this user_uuid in time') });
        }, options.appWaitMs);
      }
      return {
        submitTransfer(credentials) {
          if (!entry.paired) {
            arrival.sink.send({ type: 'failed', error: new DomainError('request.invalid', 'TRANSFER before REQUEST_TRANSFER', { details: 'state' }) });
            return;
          }
          if (entry.transfer) return;
          entry.transfer = credentials;
          entry.waiter?.resolve(credentials);
        },
        hangUp() {
          if (entry.hungUp) return;
          entry.hungUp = true;
          clearTimeout(entry.idleTimer);
          if (apps.get(arrival.userUuid) === entry) apps.delete(arrival.userUuid);
          if (!entry.paired) {
            departed.add(arrival.userUuid);
            setTimeout(() => departed.delete(arrival.userUuid), options.appWaitMs).unref();
          }
          if (!entry.transfer) entry.waiter?.reject(canceled());
        },
      };
    },

    takeApp(userUuid, windowMs, signal) {
      return new Promise<PairedApp>((resolve, reject) => {
        const present = apps.get(userUuid);
        if (present && !present.hungUp) {
          if (present.paired) return reject(new DomainError('request.invalid', 'this user_uuid is already in a payment', { details: 'user_uuid' }));
          return resolve(pair(present));
        }
        if (departed.has(userUuid)) return reject(canceled());
        if (waitingPos.has(userUuid)) return reject(new DomainError('request.invalid', 'another POS is already waiting for this user_uuid', { details: 'user_uuid' }));
        const timer = setTimeout(() => done(() => reject(expired('the app did not connect within the pairing window'))), windowMs);
        const onAbort = () => done(() => reject(canceled()));
        const done = (settle: () => void) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waitingPos.delete(userUuid);
          settle();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waitingPos.set(userUuid, (entry) => done(() => resolve(pair(entry))));
      });
    },

    failWaitingApp(userUuid, failure) {
      const entry = apps.get(userUuid);
      if (!entry || entry.paired || entry.hungUp) return;
      clearTimeout(entry.idleTimer);
      apps.delete(userUuid);
      entry.arrival.sink.send({ type: 'failed', ...failure });
    },

    size: () => ({ apps: apps.size, pos: waitingPos.size }),
  };
}
