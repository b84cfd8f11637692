import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBlockSchedule } from './block-schedule.ts';

// A chain mining every 2 s, block n at 1_000 + 2_000 n (local ms), seen by polls 0–180 ms late.
const minedAt = (n: number) => 1_000 + 2_000 * n;
const lags = [120, 40, 180, 10, 95, 60, 150, 30];

test('a chain mining every 2 s: the interval and the next block\'s time, as early as the earliest sighting allows', () => {
  const schedule = createBlockSchedule();
  assert.equal(schedule.nextBlockAt(0), undefined, 'nothing learnt from no sighting');
  for (let n = 1; n <= 8; n++) schedule.observe(BigInt(n), minedAt(n) + lags[n - 1]!);
  const interval = schedule.intervalMs()!;
  assert.ok(Math.abs(interval - 2_000) <= 100, `interval ${interval}`);
  const next = schedule.nextBlockAt(minedAt(8) + 300)!;
  // The earliest sighting (10 ms late) pins the phase: the prediction errs by at most that lag plus
  // the interval's error over the blocks since.
  assert.ok(Math.abs(next - minedAt(9)) <= 10 + 8 * Math.abs(interval - 2_000), `next ${next}, mined at ${minedAt(9)}`);
  // A block seen twice counts once.
  schedule.observe(8n, minedAt(8) + 900);
  assert.equal(schedule.nextBlockAt(minedAt(8) + 300), next);
  assert.equal(schedule.recentHead(minedAt(8) + 300), 8n, 'the latest head, seen lately');
  assert.equal(schedule.recentHead(minedAt(8) + 60_000), undefined, 'none when not seen for long');
});

test('a late block: the next one is due in the past; a schedule unseen for long is carried forward', () => {
  const schedule = createBlockSchedule();
  for (let n = 1; n <= 8; n++) schedule.observe(BigInt(n), minedAt(n) + lags[n - 1]!);
  const due = schedule.nextBlockAt(minedAt(9) + 500)!;
  assert.ok(due < minedAt(9) + 500, 'block 9 is late: due in the past');
  const later = schedule.nextBlockAt(minedAt(50) + 700)!;
  assert.ok(later > minedAt(50) + 700 && later - (minedAt(50) + 700) <= 2_000, `carried forward to ${later}`);
});

test('a chain that mines on demand (irregular heads) or faster than 500 ms has no schedule', () => {
  const onDemand = createBlockSchedule();
  let at = 0;
  for (const [n, gap] of [[1, 30], [2, 4_000], [3, 250], [4, 9_000], [5, 700], [6, 60]] as const) onDemand.observe(BigInt(n), (at += gap));
  assert.equal(onDemand.nextBlockAt(at), undefined);
  const fast = createBlockSchedule();
  for (let n = 1; n <= 10; n++) fast.observe(BigInt(n), n * 100);
  assert.equal(fast.nextBlockAt(1_000), undefined);
});

test('a chain that got shorter (a node back from an older state) is learnt again from there', () => {
  const schedule = createBlockSchedule();
  for (let n = 10; n <= 17; n++) schedule.observe(BigInt(n), minedAt(n));
  assert.notEqual(schedule.nextBlockAt(minedAt(17)), undefined);
  schedule.observe(12n, minedAt(18));
  assert.equal(schedule.nextBlockAt(minedAt(18)), undefined, 'one sighting after the drop teaches nothing yet');
});
