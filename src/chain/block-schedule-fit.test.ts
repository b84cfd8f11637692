import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createBlockSchedule } from './block-schedule.ts';

// Beside block-schedule.test.ts (kept apart so that the chain mutation area's increments rerun only
// the mutants this reaches): a head seen exactly a quarter interval after its block's earliest time
// still fits the schedule.
test('a head seen a quarter interval late fits: with one head 750 ms and one 500 ms late of four, a 2 s chain is learnt', () => {
  const schedule = createBlockSchedule();
  const late = [0, 750, 500, 0];
  late.forEach((ms, i) => schedule.observe(BigInt(i + 1), (i + 1) * 2_000 + ms));
  assert.deepEqual(schedule.decision(), { mining: 'interval', intervalMs: 2_000 });
  const later = createBlockSchedule();
  [0, 750, 501, 0].forEach((ms, i) => later.observe(BigInt(i + 1), (i + 1) * 2_000 + ms));
  assert.deepEqual(later.decision(), { mining: 'unknown' }, 'two of four fit: not learnt');
});
