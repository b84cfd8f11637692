import type { Clock } from '#shared/clock.ts';

/**
 * Requests per facilitator key: a token bucket per key in this process, holding 10 seconds of the
 * key's rate (a burst), refilled continuously. Each instance of a fleet counts its own requests.
 */
export function createKeyRateLimit(clock: Clock) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** Takes one request of `keyId`'s allowance; false when it has none left (answer 429). */
    take(keyId: string, ratePerSecond: number): boolean {
      const now = clock();
      const capacity = ratePerSecond * 10;
      const bucket = buckets.get(keyId) ?? { tokens: capacity, at: now };
      bucket.tokens = Math.min(capacity, bucket.tokens + ((now - bucket.at) / 1000) * ratePerSecond);
      bucket.at = now;
      buckets.set(keyId, bucket);
      if (bucket.tokens < 1) return false;
      bucket.tokens -= 1;
      return true;
    },
  };
}
