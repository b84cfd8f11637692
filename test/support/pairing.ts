import { createClient } from 'redis';
import { inspectPairingDesk } from '../../src/pairing/in-process-pairing-desk.ts';
import type { PairingDesk } from '../../src/pairing/pairing-desk.ts';
import { testRedisUrl } from './redis.ts';
import { waitFor } from './wait-for.ts';

/** A desk as a test sees it: an in-process desk, or a Redis desk whose keys live under `redisKeyPrefix`. */
export interface DeskView {
  desk: PairingDesk;
  redisKeyPrefix?: string;
}

export interface AtDeskOptions {
  /** Wait until it is no longer there instead (default: until it is). */
  gone?: boolean;
  timeoutMs?: number;
}

/**
 * Waits until the app of `userUuid` waits at the desk for a POS (`app`), or a POS waits there for
 * that app (`pos`): what a test waits for before it sends the other side. In-process the desk is
 * inspected; over Redis its pairing keys are read (and must name this desk's instance), since a
 * Redis desk keeps nothing else to show.
 *
 * @example
 * app.send({ state: 'START_PAY', user_uuid: uuid });
 * await untilAtDesk({ desk }, 'app', uuid);
 */
export async function untilAtDesk(view: DeskView, side: 'app' | 'pos', userUuid: string, options: AtDeskOptions = {}): Promise<void> {
  const { desk, redisKeyPrefix } = view;
  const wanted = !options.gone;
  const what = `${side === 'app' ? 'the app' : 'a POS'} of ${userUuid} ${wanted ? 'waits' : 'no longer waits'} at the desk`;
  const wait = (condition: () => boolean | Promise<boolean>) =>
    waitFor(async () => (await condition()) === wanted, { timeoutMs: options.timeoutMs ?? 10_000, message: what });
  if (!('instanceId' in desk)) {
    await wait(() => inspectPairingDesk(desk)[side === 'app' ? 'apps' : 'pos'].includes(userUuid));
    return;
  }
  if (!redisKeyPrefix) throw new Error('untilAtDesk: a Redis desk needs its redisKeyPrefix');
  const instanceId = desk.instanceId as string;
  const client = createClient({ url: testRedisUrl });
  await client.connect();
  try {
    await wait(async () => {
      const text = await client.get(`${redisKeyPrefix}:${side}:${userUuid}`);
      const value = text ? JSON.parse(text) as { s?: string; i?: string } : undefined;
      return value?.i === instanceId && (side === 'pos' || value.s === 'waiting');
    });
  } finally {
    await client.close();
  }
}
