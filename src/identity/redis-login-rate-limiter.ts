import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import { createLoginRateLimiter, LoginRateLimitedError, type LoginAttempt, type LoginRateLimiter, type LoginRateLimiterOptions } from './login-rate-limiter.ts';

/**
 * The failed-login throttle in Redis, so that failures spread over instances behind a load balancer
 * add up: the same limits and sliding window as the in-memory one (login-rate-limiter.ts), each log
 * a sorted set of attempt times (`<prefix>:id:<id>`, `<prefix>:ip:<ip>`) that expires with the
 * window. Check and count are one Lua script, so parallel guesses on several instances cannot all
 * slip in.
 *
 * Redis unreachable (not connected, or no answer within `commandTimeoutMs`): the attempt is counted
 * by an in-memory throttle of this instance instead (login-rate-limiter.ts, the same limits), so a
 * login is never a 500 and never let through unthrottled — a brute force stays bounded per instance
 * (docs/decisions/dependencies.md "Logins and pairings while Redis is down"). The client reconnects by itself; the first
 * attempt once Redis answers again is counted there again. Failures counted in memory meanwhile stay
 * in memory (they are not copied to Redis).
 */
export interface RedisLoginRateLimiter extends LoginRateLimiter {
  close(): Promise<void>;
}

export interface RedisLoginRateLimiterOptions extends Omit<LoginRateLimiterOptions, 'maxTrackedKeys'> {
  url: string;
  /** Default `vixpay:login` (the composition root gives the fleet's own, `vixpay:login:<fleet id>`). */
  keyPrefix?: string;
  logger?: Logger;
  /** How long a Redis command may take before the attempt is counted in memory instead; default 1000 ms. */
  commandTimeoutMs?: number;
}

/**
 * KEYS: id log, ip log. ARGV: now ms, window ms, id limit, ip limit, member. Returns 0 when the
 * attempt was counted, else the milliseconds until the oldest counted failure leaves the window.
 */
const beginScript = `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local limits = {tonumber(ARGV[3]), tonumber(ARGV[4])}
local wait = 0
for i = 1, 2 do
  redis.call('ZREMRANGEBYSCORE', KEYS[i], '-inf', now - window)
  local n = redis.call('ZCARD', KEYS[i])
  if n >= limits[i] then
    local oldest = redis.call('ZRANGE', KEYS[i], n - limits[i], n - limits[i], 'WITHSCORES')
    wait = math.max(wait, tonumber(oldest[2]) + window - now)
  end
end
if wait > 0 then return wait end
for i = 1, 2 do
  redis.call('ZADD', KEYS[i], now, ARGV[5])
  redis.call('ZREMRANGEBYRANK', KEYS[i], 0, -(limits[i] + 1))
  redis.call('PEXPIRE', KEYS[i], window)
end
return 0
`;

export async function createRedisLoginRateLimiter(options: RedisLoginRateLimiterOptions): Promise<RedisLoginRateLimiter> {
  const clock: Clock = options.clock ?? systemClock;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const limits = { id: options.maxFailuresPerId ?? 5, ip: options.maxFailuresPerIp ?? 30 };
  const prefix = options.keyPrefix ?? 'vixpay:login';
  const commandTimeoutMs = options.commandTimeoutMs ?? 1000;
  // While Redis does not answer: this instance's own throttle, with the same limits.
  const fallback = createLoginRateLimiter({ clock, windowMs, maxFailuresPerId: limits.id, maxFailuresPerIp: limits.ip });
  // No offline queue: while Redis is unreachable a command fails at once instead of hanging.
  const client = createClient({ url: options.url, disableOfflineQueue: true });
  let degraded = false;
  // One line per outage, not one per reconnection attempt.
  let quiet = false;
  client.on('error', (error: unknown) => {
    if (!quiet && !degraded) options.logger?.error({ err: error }, 'redis login throttle: connection error (retrying)');
    quiet = true;
  });
  client.on('ready', () => { quiet = false; });
  await client.connect();
  const keys = (id: string, ip: string) => [`${prefix}:id:${id}`, `${prefix}:ip:${ip}`];

  /** `command`, or a rejection once `commandTimeoutMs` passed (a Redis that accepts no answer is down too). */
  const bounded = <T>(command: () => Promise<T>): Promise<T> => {
    if (!client.isReady) return Promise.reject(new Error('Redis is not connected'));
    let timer: NodeJS.Timeout | undefined;
    return Promise.race([
      command(),
      new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`Redis did not answer within ${commandTimeoutMs} ms`)), commandTimeoutMs); }),
    ]).finally(() => clearTimeout(timer));
  };
  const fellBack = (error: unknown) => {
    if (!degraded) options.logger?.warn({ err: error }, 'redis login throttle: Redis does not answer; failed logins are counted on this instance until it does');
    degraded = true;
  };

  return {
    async beginAttempt(id, ip): Promise<LoginAttempt> {
      const [idKey, ipKey] = keys(id, ip) as [string, string];
      const member = `${clock()}:${randomUUID()}`;
      let wait: number;
      try {
        wait = Number(await bounded(() => client.eval(beginScript, {
          keys: [idKey, ipKey], arguments: [String(clock()), String(windowMs), String(limits.id), String(limits.ip), member],
        })));
      } catch (error) {
        fellBack(error);
        return fallback.beginAttempt(id, ip);
      }
      if (degraded) options.logger?.info('redis login throttle: Redis answers again; failed logins are counted there again');
      degraded = false;
      if (wait > 0) throw new LoginRateLimitedError(Math.max(1, Math.ceil(wait / 1000)));
      return {
        async succeeded() {
          // The password was right: a Redis gone meanwhile leaves the failure counted, never the login refused.
          await bounded(() => client.multi().del(idKey).zRem(ipKey, member).exec()).catch(fellBack);
        },
      };
    },
    async close() {
      // A client still reconnecting has nothing to finish: it is dropped at once.
      if (client.isReady) await client.close().catch(() => undefined);
      else if (client.isOpen) client.destroy();
    },
  };
}
