import { createClient } from 'redis';
import { describeFailure } from './failure-summary.ts';

/** How long a dependency named in the configuration gets to answer at start. */
export const startupProbeMs = 10_000;

/**
 * Throws, naming the setting, when the Redis at `url` does not answer PING within `timeoutMs`: a
 * server whose Redis is unreachable at start stops with that one line instead of waiting forever on
 * the client's reconnect loop, half-started.
 */
export async function probeRedis(url: string, setting = 'REDIS_URL', timeoutMs = startupProbeMs): Promise<void> {
  const client = createClient({ url, socket: { connectTimeout: timeoutMs, reconnectStrategy: false } });
  let failure: unknown;
  client.on('error', (error: unknown) => { failure ??= error; });
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      client.connect().then(() => client.ping()),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs); }),
    ]);
  } catch (error) {
    throw new Error(`Redis (${setting}, ${hostOf(url)}) does not answer: ${describeFailure(failure ?? error)}`, { cause: error });
  } finally {
    clearTimeout(timer);
    client.destroy();
  }
}

/** `host:port` of a URL, never its credentials. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'an unparsable URL';
  }
}
