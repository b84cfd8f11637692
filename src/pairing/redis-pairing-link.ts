import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { createClient, ErrorReply } from 'redis';
import type { Logger } from '#shared/logger.ts';
import type { AppValue, Message } from './redis-pairing-wire.ts';

/**
 * One instance's line to Redis: the commands and scripts of its pairings, and its own channel,
 * `<prefix>:to:<instance id>`, on which the other instances reach its streams. A message to this
 * instance itself skips Redis.
 *
 * Redis going away (docs/payments.md "Several instances"): a command fails at once while Redis is
 * unreachable (no offline queue: nothing queued runs later, after its caller gave up); `runSteadily`
 * retries one until it is answered or its caller stops waiting; a message is sent again until the
 * other instance's subscription took it (PUBLISH counts its receivers) or `deliveryMs` passed; and
 * once Redis answers again the sides re-assert what they wait for (`onReconnect`), since a Redis
 * that restarted may have lost every key.
 */
export interface PairingLink {
  readonly instanceId: string;
  appKey(userUuid: string): string;
  posKey(userUuid: string): string;
  /** Runs one of redis-pairing-scripts.ts atomically (once: fails at once while Redis is unreachable). */
  run(script: string, keys: string[], args?: Array<string | number>): Promise<unknown>;
  /**
   * `run`, tried again while Redis is unreachable (or the connection drops under it) until it is
   * answered; rejects with `RedisUnreachableError` once `until` (epoch ms) passed or `signal` aborted
   * first. A script's own error is not retried. Scripts run this way must be safe to run twice (a
   * reply lost with the connection).
   */
  runSteadily(script: string, keys: string[], args: Array<string | number>, stop: { until: number; signal?: AbortSignal }): Promise<unknown>;
  /** Calls `listener` each time Redis answers this instance again after it did not (its heartbeat renewed). */
  onReconnect(listener: () => void): void;
  /** The app key's value, if any. */
  readApp(userUuid: string): Promise<AppValue | undefined>;
  /**
   * Sends `message` to `instance`: in order with this instance's other messages to it, again and
   * again while Redis is unreachable or that instance is not subscribed (reconnecting), for at most
   * `deliveryMs`; a message no subscription took by then is dropped (logged): its receiver is gone,
   * or has ended the wait it was for.
   */
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
  /** How long a message is sent again before it is dropped; default 120 000 ms (the desk gives its app wait). */
  deliveryMs?: number;
}

/** Redis did not answer before the caller stopped waiting. */
export class RedisUnreachableError extends Error {
  constructor(cause: unknown) {
    super('Redis did not answer in time', { cause });
    this.name = 'RedisUnreachableError';
  }
}

/** Pause between tries while Redis does not answer. */
const retryMs = 200;

export async function openPairingLink(options: PairingLinkOptions): Promise<PairingLink> {
  const prefix = options.keyPrefix;
  const instanceId = randomUUID();
  const channelOf = (instance: string) => `${prefix}:to:${instance}`;
  const logError = (error: unknown, what: string) => options.logger?.error({ err: error }, `redis pairing desk: ${what}`);

  // No offline queue: a command while Redis is unreachable fails at once, so that nothing queued runs
  // after its caller gave up (a claim of an app nobody waits for any more); runSteadily retries.
  // Reconnects (its subscriber too) at most half a second apart: pairings wait on it.
  const client = createClient({
    url: options.url, disableOfflineQueue: true, socket: { reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 500) },
  });
  // One line per outage and connection, not one per reconnection attempt (two a second).
  const logOnce = (c: { on(event: string, listener: (...args: unknown[]) => void): unknown }, what: string) => {
    let quiet = false;
    c.on('error', (error) => {
      if (!quiet) logError(error, what);
      quiet = true;
    });
    c.on('ready', () => { quiet = false; });
  };
  logOnce(client, 'connection error (retrying)');
  const subscriber = client.duplicate();
  logOnce(subscriber, 'subscriber connection error (retrying)');
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
  const reconnectListeners: Array<() => void> = [];
  const beat = async (reconnected = false) => {
    try {
      await client.set(aliveKey(instanceId), '1', { PX: livenessMs });
      // Back after failed beats, or on a new connection (an outage shorter than a beat, a restart
      // that lost every key): peers get a full liveness period before anybody is declared dead.
      const back = !beating || reconnected;
      if (back) trustedFrom = Date.now() + livenessMs;
      beating = true;
      // Alive again (its key renewed first): the sides re-assert what Redis may have lost.
      if (back && !closed) {
        options.logger?.info('redis pairing desk: Redis answers again');
        for (const listener of reconnectListeners) listener();
      }
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
  // Each new connection after the first: beat and re-assert at once, whether or not a beat failed.
  client.on('ready', () => {
    if (closed) return;
    beat(true).catch((error: unknown) => logError(error, 'heartbeat failed'));
  });
  const heartbeat = setInterval(() => {
    beat().catch((error: unknown) => logError(error, 'heartbeat failed'));
    if (watched.size > 0) checkPeers().catch((error: unknown) => logError(error, 'peer check failed'));
  }, heartbeatMs);
  heartbeat.unref();

  // Messages waiting to be taken, per receiving instance, in the order they were sent.
  const deliveryMs = options.deliveryMs ?? 120_000;
  const outboxes = new Map<string, Array<{ text: string; until: number }>>();
  /** Ids of the last messages taken (each message carries one, `_m`), oldest first. */
  const seen = new Set<string>();
  const pump = async (instance: string, box: Array<{ text: string; until: number }>) => {
    while (box.length > 0 && !closed) {
      const head = box[0]!;
      const received = client.isReady ? await client.publish(channelOf(instance), head.text).catch(() => 0) : 0;
      if (received > 0 || Date.now() >= head.until) {
        if (received === 0) logError(new Error(`no subscription of instance ${instance} took it within ${deliveryMs} ms`), 'message dropped');
        box.shift();
      } else {
        await sleep(retryMs);
      }
    }
    outboxes.delete(instance);
  };

  return {
    instanceId,
    appKey,
    posKey: (userUuid) => `${prefix}:pos:${userUuid}`,
    run: (script, keys, args = []) => client.eval(script, { keys, arguments: args.map(String) }),
    async runSteadily(script, keys, args, stop) {
      for (;;) {
        try {
          // A Redis that accepts the command and does not answer (hung, overloaded) is waited for
          // until `until` only: the caller's wait ends then, whatever Redis does with it later.
          const reply = client.eval(script, { keys, arguments: args.map(String) });
          let timer: NodeJS.Timeout | undefined;
          const deadline = new Promise<never>((_, reject) => {
            timer = setTimeout(() => reject(new RedisUnreachableError(new Error('no answer'))), Math.max(0, stop.until - Date.now()));
          });
          reply.catch(() => undefined);
          return await Promise.race([reply, deadline]).finally(() => clearTimeout(timer));
        } catch (error) {
          if (error instanceof RedisUnreachableError) throw error;
          // The script ran and refused, or Redis answered with an error: not a connection's failure.
          if (error instanceof ErrorReply) throw error;
          if (closed || stop.signal?.aborted || Date.now() + retryMs >= stop.until) throw new RedisUnreachableError(error);
          await sleep(retryMs);
        }
      }
    },
    onReconnect(listener) {
      reconnectListeners.push(listener);
    },
    async readApp(userUuid) {
      const text = await client.get(appKey(userUuid));
      return text ? JSON.parse(text) as AppValue : undefined;
    },
    deliver(instance, message) {
      if (instance === instanceId) {
        queueMicrotask(() => receive(message));
        return;
      }
      const box = outboxes.get(instance);
      const entry = { text: JSON.stringify({ ...message, _m: randomUUID() }), until: Date.now() + deliveryMs };
      if (box) {
        box.push(entry);
        return;
      }
      const fresh = [entry];
      outboxes.set(instance, fresh);
      pump(instance, fresh).catch((error: unknown) => logError(error, 'delivery failed'));
    },
    async listen(handler) {
      receive = handler;
      await subscriber.subscribe(channelOf(instanceId), (text: string) => {
        try {
          const { _m: id, ...message } = JSON.parse(text) as Message & { _m?: string };
          // A message sent again because the reply to its PUBLISH was lost arrives twice: taken once.
          if (id !== undefined) {
            if (seen.has(id)) return;
            seen.add(id);
            if (seen.size > 10_000) seen.delete(seen.values().next().value!);
          }
          receive(message as Message);
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
      // Stopped cleanly: peers learn at their next check, not three beats later (when Redis answers:
      // a stop while it is unreachable does not wait for it).
      if (client.isReady) await client.del(aliveKey(instanceId)).catch(() => undefined);
      if (subscriber.isReady) await subscriber.unsubscribe().catch(() => undefined);
      await Promise.allSettled([subscriber, client].map(async (c) => {
        if (c.isReady) await c.close();
        else if (c.isOpen) c.destroy();
      }));
    },
  };
}
