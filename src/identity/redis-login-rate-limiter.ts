import { randomUUID } from 'node:crypto';
import { createClient } from 'redis';
import { systemClock, type Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { LoginRateLimitedError, type LoginRateLimiter, type LoginRateLimiterOptions } from './login-rate-limiter.ts';

/**
 * The failed-login throttle in Redis, so that failures spread over instances behind a load balancer
 * add up: the same limits and sliding window as the in-memory one (login-rate-limiter.ts), each log
 * a sorted set of attempt times (`<prefix>:id:<id>`, `<prefix>:ip:<ip>`) that expires with the
 * window. Check and count are one Lua script, so parallel guesses on several instances cannot all
 * slip in. Redis unreachable: the attempt is refused (an error), never let through unthrottled.
 */
export interface RedisLoginRateLimiter extends LoginRateLimiter {
  close(): Promise<void>;
}

export interface RedisLoginRateLimiterOptions extends Omit<LoginRateLimiterOptions, 'maxTrackedKeys'> {
  url: string;
  /** Default `vixpay:login` (compose.ts gives the fleet's own, `vixpay:login:<fleet id>`). */
  keyPrefix?: string;
  logger?: Logger;
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
  // No offline queue: while Redis is unreachable an attempt fails at once instead of hanging.
  const client = createClient({ url: options.url, disableOfflineQueue: true });
  client.on('error', (error: unknown) => options.logger?.error({ err: error }, 'redis login throttle: connection error'));
  await client.connect();
  const keys = (id: string, ip: string) => [`${prefix}:id:${id}`, `${prefix}:ip:${ip}`];

  return {
    async beginAttempt(id, ip) {
      const [idKey, ipKey] = keys(id, ip) as [string, string];
      const member = `${clock()}:${randomUUID()}`;
      const wait = Number(await client.eval(beginScript, {
        keys: [idKey, ipKey], arguments: [String(clock()), String(windowMs), String(limits.id), String(limits.ip), member],
      }));
      if (wait > 0) throw new LoginRateLimitedError(Math.max(1, Math.ceil(wait / 1000)));
      return {
        async succeeded() {
          await client.multi().del(idKey).zRem(ipKey, member).exec();
        },
      };
    },
    async close() {
      await client.close().catch(() => undefined);
    },
  };
}
