/** How long deliveries of an event are attempted: the 24 hours, counted from the event. */
export const retryWindowMs = 24 * 60 * 60 * 1000;

export interface BackoffPolicy {
  /** Wait after the first failed attempt. */
  initialMs: number;
  /** The longest wait between two attempts. */
  maxMs: number;
  /** From the event's creation; no attempt starts after it. */
  windowMs: number;
}

/**
 * When to attempt again after failed attempt number `attempt` (1 for the first) of a delivery whose
 * event was written at `createdAt`: the wait doubles from `initialMs` up to `maxMs`; null once the
 * next attempt would fall outside the window (the delivery is then given up).
 */
export function nextAttemptAt(policy: BackoffPolicy, attempt: number, createdAt: number, now: number): number | null {
  const wait = Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(attempt - 1, 40));
  const next = now + wait;
  return next - createdAt > policy.windowMs ? null : next;
}
