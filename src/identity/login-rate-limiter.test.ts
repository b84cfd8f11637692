import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressDelayMs, createLoginRateLimiter, LoginRateLimitedError } from './login-rate-limiter.ts';

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

test('an address past its budget is slowed, not locked: accounts it has not failed on are still checked; those it has wait 1 s, then 2 s, 4 s', () => {
  const { limiter, advance } = setup({ maxFailuresPerIp: 3 });
  for (const id of ['a', 'b', 'c']) limiter.beginAttempt(id, '192.0.2.7');
  // At its budget: another account is checked (right or wrong), as from any other address.
  limiter.beginAttempt('d', '192.0.2.7').succeeded();
  limiter.beginAttempt('e', '192.0.2.7');
  // 'e' failed from it with 4 failures counted (one over the budget): 2 s after that failure.
  assert.throws(() => limiter.beginAttempt('e', '192.0.2.7'), limited(2));
  assert.throws(() => limiter.beginAttempt('a', '192.0.2.7'), limited(2), 'every account it failed on: the delay is the address\'s');
  advance(1999);
  assert.throws(() => limiter.beginAttempt('e', '192.0.2.7'), limited(1));
  advance(1);
  limiter.beginAttempt('e', '192.0.2.7');
  // 5 failures counted: 4 s after this one.
  assert.throws(() => limiter.beginAttempt('e', '192.0.2.7'), limited(4));
  // Another address is not slowed on the same accounts.
  limiter.beginAttempt('e', '192.0.2.8');
});

test('the address delay starts at 1 s at the budget, doubles with each failure, and is at most the window', () => {
  assert.deepEqual([30, 31, 32, 40].map((n) => addressDelayMs(n, 30, 900_000)), [1000, 2000, 4000, 900_000]);
  const { limiter, advance } = setup({ maxFailuresPerIp: 2, maxFailuresPerId: 1000 });
  limiter.beginAttempt('x', '192.0.2.9');
  limiter.beginAttempt('y', '192.0.2.9');
  assert.throws(() => limiter.beginAttempt('y', '192.0.2.9'), limited(1), 'at the budget: 1 s');
  // Twenty more failures, each on a fresh account (each checked): the delay is capped at the window.
  for (let i = 0; i < 20; i += 1) limiter.beginAttempt(`fresh-${i}`, '192.0.2.9');
  assert.throws(() => limiter.beginAttempt('fresh-19', '192.0.2.9'), limited(900));
  advance(15 * minute);
  limiter.beginAttempt('fresh-19', '192.0.2.9');
});

test('a success clears the id and the pair, and takes the attempt off the address', () => {
  const { limiter } = setup({ maxFailuresPerIp: 5 });
  for (let i = 0; i < 4; i += 1) limiter.beginAttempt('alice', '10.0.0.1');
  limiter.beginAttempt('alice', '10.0.0.1').succeeded();
  for (let i = 0; i < 4; i += 1) limiter.beginAttempt('alice', '10.0.0.2');
  // The address 10.0.0.1 holds 4 failures (not 5): one more on carol, and it is still under its budget.
  limiter.beginAttempt('carol', '10.0.0.1');
  assert.throws(() => limiter.beginAttempt('carol', '10.0.0.1'), limited(1), 'now at its budget, slowed on carol');
  // alice's success from 10.0.0.1 cleared that pair: she is checked there, not slowed (her 4 failures from 10.0.0.2 are under her own limit).
  limiter.beginAttempt('alice', '10.0.0.1');
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
