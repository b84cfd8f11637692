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

// A node that mines on demand (anvil's automine): each send makes a block at once, seen by the
// receipt watcher's poll a few ms later.
function automine(schedule: ReturnType<typeof createBlockSchedule>, start: { block: bigint; at: number }) {
  let { block, at } = start;
  schedule.observe(block, at);
  return (gapMs: number) => {
    at += gapMs;
    // The platform holds the batch for the block the schedule predicts, when it predicts one.
    const due = schedule.nextBlockAt(at);
    const sendAt = due === undefined ? at : Math.max(at, due - 250);
    schedule.sent(sendAt, due === undefined ? undefined : due);
    block += 1n;
    schedule.observe(block, sendAt + 8);
    return { sendAt, heldMs: sendAt - at };
  };
}

test('transfers every 6 s on a node that mines on demand: never held for a 6 s slot, whatever their rhythm', () => {
  const schedule = createBlockSchedule();
  const send = automine(schedule, { block: 100n, at: 0 });
  const held = Array.from({ length: 12 }, () => send(6_000).heldMs);
  assert.deepEqual(held, held.map(() => 0), 'no send waited for a predicted block');
  assert.equal(schedule.decision().mining, 'on-demand');
  // Then at random gaps: each sent at once.
  for (const gap of [700, 4_100, 1_900, 9_300, 2_600, 350]) assert.equal(send(gap).heldMs, 0);
  assert.equal(schedule.nextBlockAt(100_000), undefined);
});

test('a schedule learnt from a node that mined every 6 s, which now mines on demand, is unlearned within three sends', () => {
  const schedule = createBlockSchedule();
  for (let n = 1; n <= 8; n++) schedule.observe(BigInt(n), n * 6_000 + 30);
  assert.equal(schedule.decision().mining, 'interval');
  const send = automine(schedule, { block: 8n, at: 8 * 6_000 + 30 });
  const held = [send(1_000), send(1_000), send(1_000), send(1_000), send(1_000)].map((s) => s.heldMs > 0);
  assert.deepEqual(held, [true, true, true, false, false], 'held for the predicted slot three times, then sent at once');
  assert.equal(schedule.decision().mining, 'on-demand');
});

test('a node that mines every 2 s, seen late by a busy event loop and sent to at random moments: learnt within four blocks, never taken for on-demand', () => {
  const schedule = createBlockSchedule();
  // Sightings up to 400 ms late (a loaded platform), sends at every phase until the schedule is learnt.
  const late = [380, 20, 250, 90, 400, 10, 310, 150, 60, 270, 5, 340];
  const phases = [1_990, 30, 1_500, 700, 120, 1_900, 60, 1_010, 40, 1_850, 300, 1_200];
  let learntAt: number | undefined;
  for (let n = 1; n <= 12; n++) {
    const due = schedule.nextBlockAt(minedAt(n) - 2_000 + phases[n - 1]!);
    // Before the schedule is learnt, a send at any moment; after, 250 ms before the block it aims at.
    schedule.sent(due === undefined ? minedAt(n) - 2_000 + phases[n - 1]! : due - 250, due);
    schedule.observe(BigInt(n), minedAt(n) + late[n - 1]!);
    if (learntAt === undefined && schedule.decision().mining === 'interval') learntAt = n;
    assert.notEqual(schedule.decision().mining, 'on-demand', `block ${n}`);
  }
  assert.ok(learntAt !== undefined && learntAt <= 4, `learnt at block ${learntAt}`);
  const interval = schedule.intervalMs()!;
  assert.ok(Math.abs(interval - 2_000) <= 100, `interval ${interval}`);
});

test('a node that mined on demand and now mines every 2 s: the schedule is learnt again within a few blocks', () => {
  const schedule = createBlockSchedule();
  const send = automine(schedule, { block: 1n, at: 0 });
  for (let i = 0; i < 5; i++) send(1_300);
  assert.equal(schedule.decision().mining, 'on-demand');
  // From block 7 on it mines every 2 s; sends at once keep finding the block some time later.
  let learntAt: number | undefined;
  for (let n = 7; n <= 14; n++) {
    const due = schedule.nextBlockAt(minedAt(n) - 1_200);
    schedule.sent(due === undefined ? minedAt(n) - 1_200 : due - 250, due);
    schedule.observe(BigInt(n), minedAt(n) + 40);
    if (learntAt === undefined && schedule.decision().mining === 'interval') learntAt = n - 6;
  }
  assert.ok(learntAt !== undefined && learntAt <= 4, `learnt ${learntAt} blocks after the change`);
});
