import type { Logger } from '#shared/logger.ts';
import type { PairingDesk } from './pairing-desk.ts';
import { createRedisAppSide } from './redis-pairing-apps.ts';
import { openPairingLink } from './redis-pairing-link.ts';
import { createRedisPosSide } from './redis-pairing-pos.ts';

/**
 * A pairing desk over Redis: the app's DoPayment and the POS's StartPayment pair by user_uuid
 * whichever instances they reach. Same interface and failure codes as the in-process desk.
 *
 * - The app's instance registers the app under its user_uuid (state `waiting`, expiry = the app's
 *   wait) and keeps its stream (redis-pairing-apps.ts); a POS's instance claims it atomically
 *   (`paired`), or registers as the one POS waiting for it and is told when it arrives
 *   (redis-pairing-pos.ts). The atomic steps are the Lua scripts of redis-pairing-scripts.ts.
 * - Each instance subscribes to one channel, `<prefix>:to:<instance id>` (redis-pairing-link.ts).
 *   Messages to the app (REQUEST_TRANSFER, END_PAY/END_REWARD, failures) go to the app's instance,
 *   which writes them to its stream; the app's TRANSFER and hang-up go to the POS's instance. Both
 *   sides on one instance skip Redis for the messages (the claim still goes through it).
 * - Timeouts run where the waiting side is (app wait: the app's instance; pairing window and
 *   TRANSFER wait: the POS's instance), exactly as in-process (pairing-rules.ts).
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

export async function createRedisPairingDesk(options: RedisPairingDeskOptions): Promise<RedisPairingDesk> {
  // A message undelivered for an app's whole wait is for a wait that has ended.
  const link = await openPairingLink({
    url: options.url, keyPrefix: options.keyPrefix ?? 'vixpay:pairing', deliveryMs: options.appWaitMs, ...(options.logger && { logger: options.logger }),
  });
  const apps = createRedisAppSide(link, options.appWaitMs);
  const pos = createRedisPosSide(link, options.appWaitMs);
  try {
    await link.listen((message) => (message.k === 'event' ? apps.receive(message) : pos.receive(message)));
  } catch (error) {
    await link.close();
    throw error;
  }
  return {
    instanceId: link.instanceId,
    connectApp: (arrival) => apps.connectApp(arrival),
    takeApp: (userUuid, windowMs, signal) => pos.takeApp(userUuid, windowMs, signal),
    failWaitingApp: (userUuid, failure) => pos.failWaitingApp(userUuid, failure),
    approveWaitingApp: (userUuid, event) => pos.approveWaitingApp(userUuid, event),
    isInstanceAlive: (instance) => link.isAlive(instance),
    async close() {
      apps.close();
      await link.close();
    },
  };
}
