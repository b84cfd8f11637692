import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { failureReport, faultKinds, scheduleArbitrary, type Schedule } from './chaos/schedule.ts';
import { restPayOutcome, restPayReplay } from './chaos/workload.ts';

// The chaos run's schedules (docs/reliability.md, "Chaos"): drawn by fast-check from the seed, so
// that a seed replays the same faults, times and operations, and a failing schedule alone replays
// from its path; every kind of fault is in every schedule; a failure names what replays it.
const windowMs = 30_000;

/** The schedules `fc.assert` hands a property for `seed` (and `path`), as scripts/chaos.ts runs them. */
function schedulesOf(seed: number, numRuns: number, path?: string): Schedule[] {
  const seen: Schedule[] = [];
  fc.assert(fc.property(scheduleArbitrary(windowMs), (schedule) => { seen.push(schedule); }), { seed, numRuns, ...(path && { path }), endOnFailure: true });
  return seen;
}

test('the same seed draws the same schedules; another seed others', () => {
  assert.deepEqual(schedulesOf(7, 3), schedulesOf(7, 3));
  assert.notDeepEqual(schedulesOf(7, 3), schedulesOf(8, 3));
});

test('a path replays that one schedule of its seed, as the replay line names it', () => {
  const run = schedulesOf(7, 3);
  for (const index of [0, 1, 2]) assert.deepEqual(schedulesOf(7, 1, String(index)), [run[index]], `path ${index}`);
});

test('every kind of fault is drawn in every schedule of a short window (each at least once, in 3 schedules of 3 seeds)', () => {
  for (const seed of [1, 2, 3]) {
    for (const [n, schedule] of schedulesOf(seed, 3).entries()) {
      const kinds = new Set(schedule.faults.map((f) => f.kind));
      assert.deepEqual(faultKinds.filter((kind) => !kinds.has(kind)), [], `seed ${seed} schedule ${n + 1}`);
      assert.ok(schedule.faults.every((f) => f.atMs >= 0 && f.atMs < windowMs), 'each fault within the window');
      assert.deepEqual(schedule.faults.map((f) => f.atMs), schedule.faults.map((f) => f.atMs).toSorted((a, b) => a - b), 'in time order');
    }
  }
});

test('a failure prints the seed, the schedule, each violation with its operation, and the command that replays it', () => {
  const [schedule] = schedulesOf(7, 3, '2');
  const report = failureReport({ seed: 7, number: 1, minutes: 0.5, path: '2' }, schedule!, [{ op: '#3 transfer 0xabc signed on A sent to B', message: 'on chain 2 times, not exactly once' }]);
  assert.match(report, /^seed 7, schedule 1: 1 violation\(s\):/);
  assert.match(report, /#3 transfer 0xabc signed on A sent to B: on chain 2 times, not exactly once/);
  for (const fault of schedule!.faults) assert.ok(report.includes(fault.kind), `the schedule names ${fault.kind}`);
  assert.match(report, /replay: npm run test:chaos -- --seed 7 --minutes 0.5 --path 2 --schedules 1$/);
  // The third schedule of a run (not itself a replay): path 2.
  assert.match(failureReport({ seed: 7, number: 3, minutes: 1 }, schedule!, []), /--seed 7 --minutes 1 --path 2 --schedules 1$/);
});

test('a REST pay answered 202 (sent, not settled yet) is indefinite, and a replay still 202 has not decided it', () => {
  // Seed 2001's third schedule of 15 s: a 202 was taken for a refusal, and its transfer, mined after
  // the heal, for money moved though refused.
  assert.equal(restPayOutcome({ code: '202' }), 'indefinite');
  assert.equal(restPayOutcome({ code: '200' }), 'success');
  assert.equal(restPayOutcome({ code: '409' }), 'indefinite');
  assert.equal(restPayOutcome({ code: '400' }), 'refused');
  assert.equal(restPayOutcome({ lost: 'socket hang up' }), 'indefinite');
  assert.equal(restPayOutcome(undefined), 'not-tried');
  assert.equal(restPayReplay({ code: '202' }), undefined);
  assert.equal(restPayReplay({ code: '503' }), undefined);
  assert.deepEqual(restPayReplay({ code: '200' }), { moved: true, said: 'replayed 200' });
  assert.deepEqual(restPayReplay({ code: '502' }), { moved: false, said: 'replayed 502' }, 'a 502 says it provably moved nothing');
});
