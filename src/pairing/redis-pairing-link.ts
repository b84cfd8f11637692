import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import type { Logger } from '../shared/logger.ts';
import type { AppValue, Message } from './redis-pairing-wire.ts';

/**
 * One instance's line to Redis: the commands and scripts of its pairings, and its own channel,
 * `<prefix>:to:<instance id>`, on which the other instances reach its streams. A message to this
 * instance itself skips Redis.
 */
export interface PairingLink {
  readonly instanceId: string;
  appKey(userUuid: string): string;
  posKey(userUuid: string): string;
  /** Runs one of redis-pairing-scripts.ts atomically. */
  run(script: string, keys: string[], args?: Array<string | number>): Promise<unknown>;
  /** The app key's value, if any. */
  readApp(userUuid: string): Promise<AppValue | undefined>;
  /** Sends `message` to `instance` (fire and forget: a lost message ends in a timeout). */
  deliver(instance: string, message: Message): void;
  /** Starts taking this instance's messages. */
  listen(receive: (message: Message) => void): Promise<void>;
  /** The key an instance's heartbeat keeps alive (`<prefix>:alive:<instance id>`); gone within `livenessMs` of its death. */
  aliveKey(instance: string): string;
  /**
   * Calls `onDead` once when `instance`'s heartbeat stops (checked every heartbeat); answers the
   * function that stops watching. Watching this instance itself does nothing.
   */
  watchPeer(instance: string, onDead: () => void): () => void;
  /** Whether `instance` beats: false only when its alive key is missing twice, a heartbeat apart, while ours is renewed. */
  isAlive(instance: string): Promise<boolean>;
  logError(error: unknown, what: string): void;
  close(): Promise<void>;
}

export interface PairingLinkOptions {
  url: string;
  keyPrefix: string;
  logger?: Logger;
  /** How often this instance renews its heartbeat and checks its peers'; default 1000 ms. Missing for 3 beats = dead. */
  heartbeatMs?: number;
}

export async function openPairingLink(options: PairingLinkOptions): Promise<PairingLink> {
  const prefix = options.keyPrefix;
  const instanceId = randomUUID();
  const channelOf = (instance: string) => `${prefix}:to:${instance}`;
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

  let receive: (message: Message) => void = () => undefined;
  let closed = false;
  const appKey = (userUuid: string) => `${prefix}:app:${userUuid}`;

  // Heartbeat: this instance's alive key, renewed every beat, expiring after three missed ones (a
  // process killed, a host gone, a network cut). Peers of cross-instance pairings watch it.
  const heartbeatMs = options.heartbeatMs ?? 1000;
  const aliveKey = (instance: string) => `${prefix}:alive:${instance}`;
  const livenessMs = 3 * heartbeatMs;
  const watched = new Map<string, Set<() => void>>();
  const missing = new Set<string>();
  // After Redis was unreachable (or restarted empty) every alive key may have lapsed: nobody is
  // declared dead until the instances have had a full liveness period to beat again.
  let trustedFrom = Date.now();
  let beating = true;
  const beat = async () => {
    try {
      await client.set(aliveKey(instanceId), '1', { PX: livenessMs });
      if (!beating) trustedFrom = Date.now() + livenessMs;
      beating = true;
    } catch (error) {
      beating = false;
      throw error;
    }
  };
  const checkPeers = async () => {
    if (!beating || Date.now() < trustedFrom) return;
    for (const [instance, watchers] of watched) {
      // Redis unreachable: the check throws, and nobody is declared dead. Missing at two checks in a
      // row (a beat apart: a live peer renews in between, even after Redis lost every key): dead.
      if (await client.exists(aliveKey(instance)) !== 0 || !beating) {
        missing.delete(instance);
        continue;
      }
      if (!missing.has(instance)) {
        missing.add(instance);
        continue;
      }
      missing.delete(instance);
      watched.delete(instance);
      for (const onDead of watchers) onDead();
    }
  };
  try {
    await beat();
  } catch (error) {
    await Promise.allSettled([subscriber.close(), client.close()]);
    throw error;
  }
  const heartbeat = setInterval(() => {
    beat().catch((error: unknown) => logError(error, 'heartbeat failed'));
    if (watched.size > 0) checkPeers().catch((error: unknown) => logError(error, 'peer check failed'));
  }, heartbeatMs);
  heartbeat.unref();

  return {
    instanceId,
    appKey,
    posKey: (userUuid) => `${prefix}:pos:${userUuid}`,
    run: (script, keys, args = []) => client.eval(script, { keys, arguments: args.map(String) }),
    async readApp(userUuid) {
      const text = await client.get(appKey(userUuid));
      return text ? JSON.parse(text) as AppValue : undefined;
    },
    deliver(instance, message) {
      if (instance === instanceId) {
        queueMicrotask(() => receive(message));
        return;
      }
      client.publish(channelOf(instance), JSON.stringify(message)).catch((error: unknown) => logError(error, 'publish failed'));
    },
    async listen(handler) {
      receive = handler;
      await subscriber.subscribe(channelOf(instanceId), (text: string) => {
        try {
          receive(JSON.parse(text) as Message);
        } catch (error) {
          logError(error, 'bad message');
        }
      });
    },
    aliveKey,
    watchPeer(instance, onDead) {
      if (instance === instanceId || closed) return () => undefined;
      const watchers = watched.get(instance) ?? new Set();
      watched.set(instance, watchers);
      let done = false;
      const once = () => {
        if (done) return;
        done = true;
        onDead();
      };
      watchers.add(once);
      return () => {
        done = true;
        watchers.delete(once);
        if (watchers.size === 0 && watched.get(instance) === watchers) {
          watched.delete(instance);
          missing.delete(instance);
        }
      };
    },
    async isAlive(instance) {
      const gone = async () => beating && Date.now() >= trustedFrom && (await client.exists(aliveKey(instance))) === 0;
      if (instance === instanceId || !(await gone())) return true;
      await new Promise((resolve) => { setTimeout(resolve, heartbeatMs); });
      return !(await gone());
    },
    logError,
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(heartbeat);
      watched.clear();
      // Stopped cleanly: peers learn at their next check, not three beats later.
      await client.del(aliveKey(instanceId)).catch(() => undefined);
      await subscriber.unsubscribe().catch(() => undefined);
      await Promise.allSettled([subscriber.close(), client.close()]);
    },
  };
}
