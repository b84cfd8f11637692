import type { AppArrival, PairedApp, PairingDesk } from './pairing-desk.ts';
import type { SessionEvent } from './session-events.ts';
import {
  appWaitExpired, canceled, createTransferHandoff, endsStream, pairingWindowExpired, posAlreadyWaiting, transferBeforeRequest,
  userUuidInPayment, userUuidInUse, waitWithin, type TransferHandoff,
} from './pairing-rules.ts';

interface AppEntry {
  arrival: AppArrival;
  paired: boolean;
  handoff: TransferHandoff;
  idleTimer?: NodeJS.Timeout;
}

/** User_uuids at an in-process desk: apps waiting for a POS, POSes waiting for an app. */
export interface PairingDeskContents {
  apps: string[];
  pos: string[];
}

const contentsOf = new WeakMap<PairingDesk, () => PairingDeskContents>();

/**
 * Who waits at a desk made by `createPairingDesk` (tests observe pairing with it; it is no part of
 * the port).
 *
 * @example
 * await waitFor(() => inspectPairingDesk(desk).apps.includes(userUuid), { timeoutMs: 5000, message: 'the app waits' });
 */
export function inspectPairingDesk(desk: PairingDesk): PairingDeskContents {
  const contents = contentsOf.get(desk);
  if (!contents) throw new Error('inspectPairingDesk: not an in-process pairing desk');
  return contents();
}

/** The in-process pairing desk: both streams of a user_uuid reach this instance. */
export function createPairingDesk(options: { appWaitMs: number }): PairingDesk {
  const apps = new Map<string, AppEntry>();
  const waitingPos = new Map<string, (entry: AppEntry) => void>();
  // Apps that hung up before any POS came: a POS arriving for them soon after is told 01 at once.
  const departed = new Set<string>();

  /** An app still waiting (unpaired, not gone) is told `event` and let go. */
  function releaseWaiting(userUuid: string, event: SessionEvent): void {
    const entry = apps.get(userUuid);
    if (!entry || entry.paired || entry.handoff.hungUp) return;
    clearTimeout(entry.idleTimer);
    apps.delete(userUuid);
    entry.arrival.sink.send(event);
  }

  function pair(entry: AppEntry): PairedApp {
    entry.paired = true;
    clearTimeout(entry.idleTimer);
    const { arrival } = entry;
    return {
      userId: arrival.userId,
      userAddress: arrival.userAddress,
      send: (event) => {
        if (endsStream(event)) apps.delete(arrival.userUuid);
        arrival.sink.send(event);
      },
      awaitTransfer: (timeoutMs, signal) => entry.handoff.await(timeoutMs, signal),
    };
  }

  function waitForPos(entry: AppEntry): void {
    const { userUuid } = entry.arrival;
    entry.idleTimer = setTimeout(() => {
      if (entry.paired || apps.get(userUuid) !== entry) return;
      apps.delete(userUuid);
      entry.arrival.sink.send({ type: 'failed', error: appWaitExpired() });
    }, options.appWaitMs);
  }

  function leave(entry: AppEntry): void {
    const { userUuid } = entry.arrival;
    if (entry.handoff.hungUp) return;
    entry.handoff.hangUp();
    clearTimeout(entry.idleTimer);
    if (apps.get(userUuid) === entry) apps.delete(userUuid);
    if (!entry.paired) {
      departed.add(userUuid);
      setTimeout(() => departed.delete(userUuid), options.appWaitMs).unref();
    }
  }

  const desk: PairingDesk = {
    connectApp(arrival) {
      const live = apps.get(arrival.userUuid);
      if (live && !live.handoff.hungUp) throw userUuidInUse();
      const entry: AppEntry = { arrival, paired: false, handoff: createTransferHandoff() };
      departed.delete(arrival.userUuid);
      apps.set(arrival.userUuid, entry);
      const pos = waitingPos.get(arrival.userUuid);
      if (pos) {
        waitingPos.delete(arrival.userUuid);
        pos(entry);
      } else {
        waitForPos(entry);
      }
      return {
        submitTransfer(credentials) {
          if (entry.paired) entry.handoff.submit(credentials);
          else arrival.sink.send({ type: 'failed', error: transferBeforeRequest() });
        },
        hangUp: () => leave(entry),
      };
    },

    async takeApp(userUuid, windowMs, signal) {
      const present = apps.get(userUuid);
      if (present && !present.handoff.hungUp) {
        if (present.paired) throw userUuidInPayment();
        return pair(present);
      }
      if (departed.has(userUuid)) throw canceled();
      if (waitingPos.has(userUuid)) throw posAlreadyWaiting();
      return waitWithin(windowMs, signal, pairingWindowExpired, (settle: { resolve(app: PairedApp): void }) => {
        waitingPos.set(userUuid, (entry) => settle.resolve(pair(entry)));
        return { stop: () => waitingPos.delete(userUuid) };
      });
    },

    failWaitingApp(userUuid, failure) {
      releaseWaiting(userUuid, { type: 'failed', ...failure });
    },
    approveWaitingApp(userUuid, event) {
      releaseWaiting(userUuid, event);
    },
  };
  contentsOf.set(desk, () => ({
    apps: [...apps.values()].filter((entry) => !entry.paired).map((entry) => entry.arrival.userUuid),
    pos: [...waitingPos.keys()],
  }));
  return desk;
}
