import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLoginRateLimiter, LoginRateLimitedError } from './login-rate-limiter.ts';

const minute = 60_000;

function setup(options: Parameters<typeof createLoginRateLimiter>[0] = {}) {
  let now = 1_000_000;
  const limiter = createLoginRateLimiter({ clock: () => now, ...options });
  return { limiter, advance: (ms: number) => { now += ms; } };
}

const limited = (seconds: number) => (e: unknown) =>
  e instanceof LoginRateLimitedError && e.code === 'auth.rate_limited' && e.retryAfterSeconds === seconds;

test('5 failures per id in 15 minutes, then refused until the oldest leaves the window', () => {
  const { limiter, advance } = setup();
  for (let i = 0; i < 5; i += 1) {
    limiter.beginAttempt('alice', `10.0.0.${i}`);
    advance(minute);
  }
  // Failures at t=0..4 min, now t=5 min: the first leaves the window at t=15 min.
  assert.throws(() => limiter.beginAttempt('alice', '10.0.0.99'), limited(600));
  advance(10 * minute - 1);
  assert.throws(() => limiter.beginAttempt('alice', '10.0.0.99'), limited(1));
  advance(1);
  limiter.beginAttempt('alice', '10.0.0.99'); // a slot freed: sliding, not fixed, window
  assert.throws(() => limiter.beginAttempt('alice', '10.0.0.99'), LoginRateLimitedError);
});

test('other ids are not affected by one id being locked', () => {
  const { limiter } = setup({ maxFailuresPerIp: 100 });
  for (let i = 0; i < 5; i += 1) limiter.beginAttempt('alice', '10.0.0.1');
  assert.throws(() => limiter.beginAttempt('alice', '10.0.0.1'), LoginRateLimitedError);
  limiter.beginAttempt('bob', '10.0.0.1');
});

test('failures per IP across many ids are limited too', () => {
  const { limiter } = setup({ maxFailuresPerIp: 3 });
  for (const id of ['a', 'b', 'c']) limiter.beginAttempt(id, '192.0.2.7');
  assert.throws(() => limiter.beginAttempt('d', '192.0.2.7'), limited(900));
  limiter.beginAttempt('d', '192.0.2.8');
});

test('a success clears the id and takes the attempt off the IP', () => {
  const { limiter } = setup({ maxFailuresPerIp: 5 });
  for (let i = 0; i < 4; i += 1) limiter.beginAttempt('alice', '10.0.0.1');
  limiter.beginAttempt('alice', '10.0.0.1').succeeded();
  for (let i = 0; i < 4; i += 1) limiter.beginAttempt('alice', '10.0.0.2');
  // The IP 10.0.0.1 holds 4 failures (not 5), so one more attempt is allowed.
  limiter.beginAttempt('carol', '10.0.0.1');
  assert.throws(() => limiter.beginAttempt('carol', '10.0.0.1'), LoginRateLimitedError);
});

test('parallel attempts count before they finish', () => {
  const { limiter } = setup();
  const started = [];
  for (let i = 0; i < 5; i += 1) started.push(limiter.beginAttempt('alice', '10.0.0.1'));
  assert.throws(() => limiter.beginAttempt('alice', '10.0.0.1'), LoginRateLimitedError);
});

test('memory stays bounded when ids are sprayed', () => {
  const { limiter } = setup({ maxTrackedKeys: 50, maxFailuresPerIp: 1_000_000 });
  for (let i = 0; i < 1000; i += 1) limiter.beginAttempt(`id-${i}`, '10.0.0.1');
  // The oldest ids were forgotten; the newest still count.
  limiter.beginAttempt('id-0', '10.0.0.1');
  for (let i = 0; i < 4; i += 1) limiter.beginAttempt('id-999', '10.0.0.1');
  assert.throws(() => limiter.beginAttempt('id-999', '10.0.0.1'), LoginRateLimitedError);
});
