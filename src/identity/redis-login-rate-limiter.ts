import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import { addressExcessKept, createLoginRateLimiter, LoginRateLimitedError, type LoginAttempt, type LoginRateLimiter, type LoginRateLimiterOptions } from './login-rate-limiter.ts';

/**
 * The failed-login throttle in Redis, so that failures spread over instances behind a load balancer
 * add up: the same limits, address delay and sliding window as the in-memory one
 * (login-rate-limiter.ts), each log a sorted set of attempt times (`<prefix>:id:<id>`,
 * `<prefix>:ip:<ip>`) and each pair's last failure a string (`<prefix>:pair:<ip>:<id>`), all
 * expiring with the window. Check and count are one Lua script, so parallel guesses on several instances cannot all
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
 * KEYS: account log, address log, pair (address, account: its last failure). ARGV: now ms, window
 * ms, account limit, address budget, member, address entries kept. Returns 0 when the attempt was
 * counted, else the milliseconds to wait: until the account's oldest counted failure leaves the
 * window, or, for an address past its budget on an account it has been failing on, until the
 * address delay (login-rate-limiter.ts `addressDelayMs`) after that pair's last failure.
 */
const beginScript = `
local now, window = tonumber(ARGV[1]), tonumber(ARGV[2])
local idLimit, ipLimit, kept = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window)
local wait = 0
local n = redis.call('ZCARD', KEYS[1])
if n >= idLimit then
  local oldest = redis.call('ZRANGE', KEYS[1], n - idLimit, n - idLimit, 'WITHSCORES')
  wait = tonumber(oldest[2]) + window - now
end
local m = redis.call('ZCARD', KEYS[2])
local last = redis.call('GET', KEYS[3])
if m >= ipLimit and last then
  local delay = math.min(1000 * 2 ^ (m - ipLimit), window)
  wait = math.max(wait, tonumber(last) + delay - now)
end
if wait > 0 then return wait end
redis.call('ZADD', KEYS[1], now, ARGV[5])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(idLimit + 1))
redis.call('PEXPIRE', KEYS[1], window)
redis.call('ZADD', KEYS[2], now, ARGV[5])
redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -(kept + 1))
redis.call('PEXPIRE', KEYS[2], window)
redis.call('SET', KEYS[3], now, 'PX', window)
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
  const keys = (id: string, ip: string) => [`${prefix}:id:${id}`, `${prefix}:ip:${ip}`, `${prefix}:pair:${ip}:${id}`];

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
      const [idKey, ipKey, pairKey] = keys(id, ip) as [string, string, string];
      const member = `${clock()}:${randomUUID()}`;
      let wait: number;
      try {
        wait = Number(await bounded(() => client.eval(beginScript, {
          keys: [idKey, ipKey, pairKey], arguments: [String(clock()), String(windowMs), String(limits.id), String(limits.ip), member, String(limits.ip + addressExcessKept)],
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
          await bounded(() => client.multi().del([idKey, pairKey]).zRem(ipKey, member).exec()).catch(fellBack);
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
