import { test } from 'node:test';
import assert from 'node:assert/strict';
import { nextAttemptAt, retryWindowMs } from './backoff.ts';

const policy = { initialMs: 10_000, maxMs: 3_600_000, windowMs: retryWindowMs };

test('the wait doubles from the first failure up to one hour, and attempts stop 24 hours after the event', () => {
  // A fake clock: each attempt happens exactly when it is due, from an event written at 0.
  let now = 0;
  const waits: number[] = [];
  for (let attempt = 1; ; attempt++) {
    const next = nextAttemptAt(policy, attempt, 0, now);
    if (next === null) break;
    waits.push(next - now);
    now = next;
  }
  assert.deepEqual(waits.slice(0, 10).map((ms) => ms / 1000), [10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600]);
  assert.ok(waits.slice(9).every((ms) => ms === 3_600_000), 'capped at one hour');
  assert.ok(now <= retryWindowMs, 'no attempt after 24 hours');
  assert.ok(now > retryWindowMs - 3_600_000, 'attempts go on until the last hour of the window');
  assert.equal(waits.length, 9 + Math.floor((retryWindowMs - 5110_000) / 3_600_000));
});

test('a delivery is given up once its next attempt would fall after the window', () => {
  assert.equal(nextAttemptAt(policy, 40, 0, retryWindowMs - 60_000), null);
  assert.equal(nextAttemptAt(policy, 1, 0, retryWindowMs - 60_000), retryWindowMs - 50_000);
});
