import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MissingPartError, requiredParts, skipWithout } from './support/parts.ts';

// The switch that turns "skipped: Redis is missing" into a failure where the part must be there (CI).

test('a developer run requires nothing; CI requires every part; VIXPAY_REQUIRE says exactly which', () => {
  assert.deepEqual([...requiredParts({})], []);
  assert.deepEqual([...requiredParts({ CI: 'false' })], []);
  assert.deepEqual([...requiredParts({ CI: 'true' })].sort(), ['chromium', 'hardhat', 'python-grpc', 'redis', 'softhsm2']);
  assert.deepEqual([...requiredParts({ VIXPAY_REQUIRE: 'all' })].sort(), ['chromium', 'hardhat', 'python-grpc', 'redis', 'softhsm2']);
  assert.deepEqual([...requiredParts({ VIXPAY_REQUIRE: 'redis, chromium' })].sort(), ['chromium', 'redis']);
  assert.deepEqual([...requiredParts({ CI: 'true', VIXPAY_REQUIRE: 'none' })], []);
  assert.throws(() => requiredParts({ VIXPAY_REQUIRE: 'redis,chromum' }), /unknown part "chromum"/);
});

test('a part that is there runs the test; a missing one skips it, or fails where it is required', () => {
  assert.equal(skipWithout('redis', false, { CI: 'true' }), false);
  assert.match(skipWithout('redis', 'no Redis answers', {}) as string, /^needs redis: no Redis answers \(.*redis-server/);
  assert.match(skipWithout('redis', 'no Redis answers', { VIXPAY_REQUIRE: 'chromium' }) as string, /^needs redis:/);
  assert.throws(() => skipWithout('redis', 'no Redis answers', { CI: 'true' }), MissingPartError);
  assert.throws(() => skipWithout('chromium', '/usr/bin/chromium does not exist', { VIXPAY_REQUIRE: 'chromium' }), /chromium is required .* but missing: \/usr\/bin\/chromium does not exist/);
});
