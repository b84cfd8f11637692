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
  logError(error: unknown, what: string): void;
  close(): Promise<void>;
}

export interface PairingLinkOptions {
  url: string;
  keyPrefix: string;
  logger?: Logger;
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
    logError,
    async close() {
      if (closed) return;
      closed = true;
      await subscriber.unsubscribe().catch(() => undefined);
      await Promise.allSettled([subscriber.close(), client.close()]);
    },
  };
}
