import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';

export interface LoginRateLimiterOptions {
  clock?: Clock;
  /** Sliding window; default 15 minutes (`LOGIN_WINDOW_SECONDS`). */
  windowMs?: number;
  /** Failed password attempts per account within the window, from anywhere; default 5 (`LOGIN_MAX_FAILURES_PER_ACCOUNT`). */
  maxFailuresPerId?: number;
  /**
   * Failed password attempts per client address within the window before the address is slowed;
   * default 30 (`LOGIN_MAX_FAILURES_PER_ADDRESS`; offices and stores behind one NAT share an address).
   */
  maxFailuresPerIp?: number;
  /** Bound on remembered ids, addresses and pairs, so spraying random ids cannot grow memory without end; default 100 000. */
  maxTrackedKeys?: number;
}

/** Failures past the address budget that are still counted: enough for the delay to reach any window (2^16 s). */
export const addressExcessKept = 16;

/**
 * How long an address past its budget waits between two attempts on an account it has been failing
 * on: 1 s at the budget, doubling with each failure beyond it, at most the window.
 */
export function addressDelayMs(failures: number, budget: number, windowMs: number): number {
  return Math.min(1000 * 2 ** (failures - budget), windowMs);
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
 * Failed-login throttle, per account and per address apart (docs/decisions/identity.md "Login
 * throttling per account and per address"). An account (`id`) with its maximum of failures inside the
 * window, from any address, is refused before its password is checked. An address with its budget of
 * failures is slowed, never locked: its attempts on an account it has been failing on wait
 * `addressDelayMs` after the last such failure (1 s, doubling with each further failure), while the
 * right password of any account it has not been failing on is always checked (stores behind one NAT).
 * An attempt counts as failed from the moment it begins, so a burst of parallel guesses cannot all
 * slip in while the first hashes are computed. Each population has a throttle of its own (the
 * console's operators apart from the app's users: src/compose/identity.ts), so failures of one never
 * slow the other. `createLoginRateLimiter` keeps the logs in memory (one instance);
 * `createRedisLoginRateLimiter` (redis-login-rate-limiter.ts) in Redis, shared by every instance.
 * Callers `await` both methods, whichever it is.
 */
export interface LoginRateLimiter {
  /** Throws (rejects with) LoginRateLimitedError while `id` or the pair (`ip`, `id`) is held back; otherwise counts the attempt as failed. */
  beginAttempt(id: string, ip: string): LoginAttempt | Promise<LoginAttempt>;
}

export interface LoginAttempt {
  /** The password was right: clears the id's failures (and the pair's) and takes this attempt off the address's log. */
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
  // Keys are prefixed so an id that looks like an IP never shares a log with that IP; a pair's log
  // holds its last failure only. A newline is in neither an IP nor a (form- or JSON-checked) id here.
  const failures = new Map<string, number[]>();
  const keys = (id: string, ip: string) => ({ id: `id:${id}`, ip: `ip:${ip}`, pair: `pair:${ip}\n${id}` });

  const recent = (key: string, now: number): number[] => {
    const log = failures.get(key);
    if (!log) return [];
    while (log.length > 0 && (log[0] as number) <= now - windowMs) log.shift();
    if (log.length === 0) failures.delete(key);
    return log;
  };

  /** Ms until `id` is out of its limit, 0 when it is. */
  const accountWait = (key: string, now: number): number => {
    const log = recent(key, now);
    if (log.length < limits.id) return 0;
    return (log[log.length - limits.id] as number) + windowMs - now;
  };

  /** Ms until the address may try this account again, 0 when it may: only past its budget, only on an account it has been failing on. */
  const addressWait = (ipKey: string, pairKey: string, now: number): number => {
    const count = recent(ipKey, now).length;
    if (count < limits.ip) return 0;
    const last = recent(pairKey, now)[0];
    if (last === undefined) return 0;
    return Math.max(0, last + addressDelayMs(count, limits.ip, windowMs) - now);
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

  const record = (key: string, kept: number, now: number) => {
    const log = recent(key, now);
    if (log.length === 0) {
      evict(now);
      failures.set(key, log);
    }
    log.push(now);
    if (log.length > kept) log.shift();
  };

  return {
    beginAttempt(id, ip) {
      const now = clock();
      const key = keys(id, ip);
      const wait = Math.max(accountWait(key.id, now), addressWait(key.ip, key.pair, now));
      if (wait > 0) throw new LoginRateLimitedError(Math.max(1, Math.ceil(wait / 1000)));
      record(key.id, limits.id, now);
      record(key.ip, limits.ip + addressExcessKept, now);
      record(key.pair, 1, now);
      return {
        succeeded() {
          failures.delete(key.id);
          failures.delete(key.pair);
          const log = failures.get(key.ip);
          const index = log?.lastIndexOf(now) ?? -1;
          if (log && index >= 0) log.splice(index, 1);
        },
      };
    },
  };
}
