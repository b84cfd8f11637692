import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';

export interface LoginRateLimiterOptions {
  clock?: Clock;
  /** Sliding window; default 15 minutes. */
  windowMs?: number;
  /** Failed password attempts per user id within the window; default 5. */
  maxFailuresPerId?: number;
  /** Failed password attempts per client IP within the window; default 30 (offices share an IP). */
  maxFailuresPerIp?: number;
  /** Bound on remembered ids plus IPs, so spraying random ids cannot grow memory without end; default 100 000. */
  maxTrackedKeys?: number;
}

/** `auth.rate_limited` with the seconds after which the oldest counted failure leaves the window. */
export class LoginRateLimitedError extends DomainError {
  readonly retryAfterSeconds: number;

  constructor(retryAfterSeconds: number) {
    super('auth.rate_limited', 'Too many failed login attempts; try again later', { details: `retry after ${retryAfterSeconds} s` });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * Failed-login throttle: a sliding log of failed password attempts per user id and per client IP.
 * While either holds its maximum inside the window, attempts are refused before the password is
 * even checked. An attempt counts as failed from the moment it begins, so a burst of parallel
 * guesses cannot all slip in while the first hashes are computed. `createLoginRateLimiter` keeps the
 * logs in memory (one instance); `createRedisLoginRateLimiter` (redis-login-rate-limiter.ts) in
 * Redis, shared by every instance. Callers `await` both methods, whichever it is.
 */
export interface LoginRateLimiter {
  /** Throws (rejects with) LoginRateLimitedError while `id` or `ip` is over its limit; otherwise counts the attempt as failed. */
  beginAttempt(id: string, ip: string): LoginAttempt | Promise<LoginAttempt>;
}

export interface LoginAttempt {
  /** The password was right: clears the id's failures and takes this attempt off the IP's log. */
  succeeded(): void | Promise<void>;
}

/** The in-memory throttle answers at once. */
export interface InMemoryLoginRateLimiter extends LoginRateLimiter {
  beginAttempt(id: string, ip: string): { succeeded(): void };
}

export function createLoginRateLimiter(options: LoginRateLimiterOptions = {}): InMemoryLoginRateLimiter {
  const clock = options.clock ?? systemClock;
  const windowMs = options.windowMs ?? 15 * 60_000;
  const maxTrackedKeys = options.maxTrackedKeys ?? 100_000;
  const limits = { id: options.maxFailuresPerId ?? 5, ip: options.maxFailuresPerIp ?? 30 };
  // Keys are prefixed so an id that looks like an IP never shares a log with that IP.
  const failures = new Map<string, number[]>();

  const recent = (key: string, now: number): number[] => {
    const log = failures.get(key);
    if (!log) return [];
    while (log.length > 0 && (log[0] as number) <= now - windowMs) log.shift();
    if (log.length === 0) failures.delete(key);
    return log;
  };

  const retryAfter = (key: string, limit: number, now: number): number | undefined => {
    const log = recent(key, now);
    if (log.length < limit) return undefined;
    return Math.max(1, Math.ceil(((log[log.length - limit] as number) + windowMs - now) / 1000));
  };

  const evict = (now: number) => {
    if (failures.size < maxTrackedKeys) return;
    for (const key of failures.keys()) recent(key, now);
    // Still full of live entries: forget the least recently inserted ones.
    for (const key of failures.keys()) {
      if (failures.size < maxTrackedKeys) break;
      failures.delete(key);
    }
  };

  const record = (key: string, limit: number, now: number) => {
    const log = recent(key, now);
    if (log.length === 0) {
      evict(now);
      failures.set(key, log);
    }
    log.push(now);
    if (log.length > limit) log.shift();
  };

  return {
    beginAttempt(id, ip) {
      const now = clock();
      const wait = Math.max(retryAfter(`id:${id}`, limits.id, now) ?? 0, retryAfter(`ip:${ip}`, limits.ip, now) ?? 0);
      if (wait > 0) throw new LoginRateLimitedError(wait);
      record(`id:${id}`, limits.id, now);
      record(`ip:${ip}`, limits.ip, now);
      return {
        succeeded() {
          failures.delete(`id:${id}`);
          const log = failures.get(`ip:${ip}`);
          const index = log?.lastIndexOf(now) ?? -1;
          if (log && index >= 0) log.splice(index, 1);
        },
      };
    },
  };
}
