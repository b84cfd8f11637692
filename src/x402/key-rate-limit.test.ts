import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createKeyRateLimit } from './key-rate-limit.ts';

test('a key may burst 10 seconds of its rate, then gets its rate back as time passes; keys are counted apart', () => {
  let now = 1_000_000;
  const limit = createKeyRateLimit(() => now);
  const taken = Array.from({ length: 21 }, () => limit.take('fk_a', 2));
  assert.deepEqual(taken, [...Array(20).fill(true), false]);
  assert.equal(limit.take('fk_b', 2), true);
  now += 500;
  assert.deepEqual([limit.take('fk_a', 2), limit.take('fk_a', 2)], [true, false]);
  now += 60_000;
  assert.equal(Array.from({ length: 25 }, () => limit.take('fk_a', 2)).filter(Boolean).length, 20);
});
