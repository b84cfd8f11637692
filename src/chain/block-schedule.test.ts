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

test('a chain that mines on demand (irregular heads) has no schedule; one that mines every 100 ms has', () => {
  const onDemand = createBlockSchedule();
  let at = 0;
  for (const [n, gap] of [[1, 30], [2, 4_000], [3, 250], [4, 9_000], [5, 700], [6, 60]] as const) onDemand.observe(BigInt(n), (at += gap));
  assert.equal(onDemand.nextBlockAt(at), undefined);
  // No interval is too short to be one: what tells it from a node mining on demand is how its blocks
  // answer the sends (below).
  const fast = createBlockSchedule();
  for (let n = 1; n <= 10; n++) fast.observe(BigInt(n), n * 100);
  assert.equal(fast.nextBlockAt(1_000), 1_100);
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
    const carried = schedule.sent(sendAt, due === undefined ? undefined : due);
    block += 1n;
    schedule.observe(block, sendAt + 8);
    carried(block);
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
    const carried = schedule.sent(due === undefined ? minedAt(n) - 2_000 + phases[n - 1]! : due - 250, due);
    schedule.observe(BigInt(n), minedAt(n) + late[n - 1]!);
    carried(BigInt(n));
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
    const carried = schedule.sent(due === undefined ? minedAt(n) - 1_200 : due - 250, due);
    schedule.observe(BigInt(n), minedAt(n) + 40);
    carried(BigInt(n));
    if (learntAt === undefined && schedule.decision().mining === 'interval') learntAt = n - 6;
  }
  assert.ok(learntAt !== undefined && learntAt <= 4, `learnt ${learntAt} blocks after the change`);
});

// Heads seen exactly when mined: what the schedule holds at its bounds.
function exact(intervalMs: number, blocks: number, options?: Parameters<typeof createBlockSchedule>[0]) {
  const schedule = createBlockSchedule(options);
  for (let n = 1; n <= blocks; n++) schedule.observe(BigInt(n), n * intervalMs);
  return schedule;
}

test('learnt from the fourth head, at any interval: 2 s, 0.45 s, 0.25 s, 0.2 s', () => {
  assert.deepEqual(exact(2_000, 3).decision(), { mining: 'unknown' }, 'three heads teach nothing yet');
  assert.equal(exact(2_000, 3).intervalMs(), undefined);
  assert.deepEqual(exact(2_000, 4).decision(), { mining: 'interval', intervalMs: 2_000 });
  assert.deepEqual(exact(450, 8).decision(), { mining: 'interval', intervalMs: 450 });
  assert.equal(exact(250, 8).nextBlockAt(2_100), 2_250);
  assert.deepEqual(exact(200, 4).decision(), { mining: 'interval', intervalMs: 200 });
  const same = createBlockSchedule();
  for (let n = 1; n <= 6; n++) same.observe(BigInt(n), 1_000);
  assert.deepEqual(same.decision(), { mining: 'unknown' }, 'heads seen in one millisecond: no rhythm');
});

test('a 0.25 s chain seen by polls up to 150 ms late (a busy event loop): learnt, and kept at its interval', () => {
  // Blocks every 250 ms; every other head, or one in four, seen late (more than a quarter interval).
  for (const [every, lateMs] of [[2, 100], [2, 150], [4, 150]] as const) {
    const schedule = createBlockSchedule();
    const kept: Array<number | undefined> = [];
    for (let n = 1; n <= 16; n++) {
      schedule.observe(BigInt(n), n * 250 + (n % every === 0 ? lateMs : 0));
      if (n >= 5) kept.push(schedule.intervalMs());
    }
    assert.deepEqual(kept, kept.map(() => 250), `one in ${every} seen ${lateMs} ms late`);
  }
});

test('the next block: due one interval after the latest until two intervals have passed unseen, then carried to the next slot after now', () => {
  const schedule = exact(2_000, 8); // block 8 at 16 s
  assert.equal(schedule.nextBlockAt(16_000), 18_000);
  assert.equal(schedule.nextBlockAt(19_999), 18_000, 'late: due in the past');
  assert.equal(schedule.nextBlockAt(20_000), 20_000, 'two intervals unseen: the slot at now');
  assert.equal(schedule.nextBlockAt(20_001), 22_000);
  assert.equal(schedule.nextBlockAt(25_000), 26_000);
  assert.equal(schedule.recentHead(26_000), 8n, 'seen 10 s ago: still recent');
  assert.equal(schedule.recentHead(26_001), undefined);
  assert.equal(schedule.recentHead(17_000, 1_000), 8n);
  assert.equal(schedule.recentHead(17_001, 1_000), undefined);
  assert.equal(createBlockSchedule().recentHead(0), undefined, 'no head seen');
});

test('a node that changes its rhythm is learnt again from the eight latest heads: 2 s, then 3 s within five blocks', () => {
  const schedule = exact(2_000, 8);
  const seen: Array<number | undefined> = [];
  for (let n = 9; n <= 16; n++) {
    // The watcher polls: 50 ms before each head it still saw the one before.
    schedule.observe(BigInt(n - 1), 16_000 + (n - 8) * 3_000 - 50);
    schedule.observe(BigInt(n), 16_000 + (n - 8) * 3_000);
    seen.push(schedule.intervalMs());
  }
  // In between, the heads fit neither rhythm: no schedule rather than a wrong one.
  assert.deepEqual(seen, [2_000, 2_000, undefined, undefined, 3_000, 3_000, 3_000, 3_000]);
  const wide = exact(2_000, 8, { window: 12 });
  for (let n = 9; n <= 13; n++) {
    wide.observe(BigInt(n - 1), 16_000 + (n - 8) * 3_000 - 50);
    wide.observe(BigInt(n), 16_000 + (n - 8) * 3_000);
  }
  assert.equal(wide.intervalMs(), undefined, 'a wider window holds more of the old rhythm');
});

test('a head mined within a quarter interval of its slot fits; three quarters of the heads must fit to learn, fewer than half to unlearn', () => {
  // Heads 1–8 of a 2 s chain: `late` ms after their slot.
  const seenLate = (late: number[]) => {
    const schedule = createBlockSchedule();
    late.forEach((ms, i) => schedule.observe(BigInt(i + 1), (i + 1) * 2_000 + ms));
    return schedule;
  };
  // Four heads, the first 501 ms late: three of four fit, enough to learn; two of four are not.
  assert.equal(seenLate([501, 0, 0, 0]).intervalMs(), 2_000, 'three of four fit');
  assert.equal(seenLate([0, 0, 0]).intervalMs(), undefined);
  // Learnt, then every other head seen half an interval late: half still fit, the schedule stays.
  const half = exact(2_000, 8);
  const kept: Array<number | undefined> = [];
  for (let n = 9; n <= 16; n++) {
    half.observe(BigInt(n), n * 2_000 + (n % 2 === 1 ? 1_000 : 0));
    kept.push(half.intervalMs());
  }
  assert.deepEqual(kept, kept.map(() => 2_000));
  // Every head 1.2 s late from block 9, a poll 50 ms before each still seeing the one before: dropped
  // once three of them make the heads consistent with it fewer than half.
  const late = exact(2_000, 8);
  const dropped: Array<number | undefined> = [];
  for (let n = 9; n <= 12; n++) {
    late.observe(BigInt(n - 1), n * 2_000 + 1_150);
    late.observe(BigInt(n), n * 2_000 + 1_200);
    dropped.push(late.intervalMs());
  }
  assert.deepEqual(dropped, [2_000, 2_000, undefined, undefined]);
});

test('sends not held: the block right after the head, seen within 150 ms and within a quarter of the time the chain sat at that head, counts as quick; three in a row and the node mines on demand', () => {
  const run = (waitedMs: number[], options?: Parameters<typeof createBlockSchedule>[0]) => {
    const schedule = createBlockSchedule(options);
    schedule.observe(1n, 0);
    let at = 0;
    // Sends at irregular moments: the heads they make show no interval.
    const gaps = [10_000, 3_300, 17_700, 6_100];
    waitedMs.forEach((waited, i) => {
      at += gaps[i]!;
      const carried = schedule.sent(at);
      schedule.observe(BigInt(i + 2), at + waited);
      carried(BigInt(i + 2));
    });
    return schedule.decision().mining;
  };
  assert.equal(run([150, 150, 150]), 'on-demand');
  assert.equal(run([150, 150]), 'unknown', 'two are not enough');
  assert.equal(run([150, 151, 150, 150]), 'unknown', 'a send that waited starts the count again');
  assert.equal(run([151, 151, 151]), 'unknown');
  assert.equal(run([300, 300, 300], { quickMs: 300 }), 'on-demand');
  // A send made before any head was seen has nothing to be judged against.
  const early = createBlockSchedule();
  const first = early.sent(0);
  early.observe(1n, 5);
  first(1n);
  for (const n of [2, 3]) {
    const carried = early.sent(n * 10_000);
    early.observe(BigInt(n), n * 10_000 + 5);
    carried(BigInt(n));
  }
  assert.equal(early.decision().mining, 'unknown');
});

test('sends not held on a 0.25 s chain before its rhythm is learnt: a block soon after the send, but not soon after the head before it, a block between, or a block two sends share is no sign of mining on demand', () => {
  // Head n mined at 250 n, seen 20 ms later; the sends' own blocks as the test says.
  const judged = (send: (schedule: ReturnType<typeof createBlockSchedule>, n: number) => void) => {
    const schedule = createBlockSchedule();
    schedule.observe(1n, 270);
    for (let n = 2; n <= 3; n++) send(schedule, n);
    return schedule.decision().mining;
  };
  // Sent 200 ms into the block (its head seen 180 ms before), the next block seen 70 ms later:
  // within 150 ms, but not within a quarter of the 250 ms the chain sat at its head.
  assert.equal(judged((schedule, n) => {
    const carried = schedule.sent(250 * (n - 1) + 200);
    schedule.observe(BigInt(n), 250 * n + 20);
    carried(BigInt(n));
  }), 'unknown');
  // Sent 240 ms into the block: 30 ms before its block is seen, a quarter of the 250 ms: quick.
  const quick = createBlockSchedule();
  quick.observe(1n, 270);
  for (let n = 2; n <= 4; n++) {
    const carried = quick.sent(250 * (n - 1) + 240);
    quick.observe(BigInt(n), 250 * n + 20);
    carried(BigInt(n));
  }
  assert.equal(quick.decision().mining, 'on-demand', 'three such in a row: as a node mining on demand would answer');
  // The same timing, but each block carries two sends of ours: blocks not made by one send each.
  const shared = createBlockSchedule();
  shared.observe(1n, 270);
  for (let n = 2; n <= 4; n++) {
    const carried = [shared.sent(250 * (n - 1) + 238), shared.sent(250 * (n - 1) + 240)];
    shared.observe(BigInt(n), 250 * n + 20);
    for (const c of carried) c(BigInt(n));
  }
  assert.notEqual(shared.decision().mining, 'on-demand');
  // Each send's block is the second after the head seen at the send: a block came between.
  const between = createBlockSchedule();
  between.observe(1n, 270);
  for (let n = 2; n <= 6; n += 2) {
    const carried = between.sent(250 * (n - 1) + 240);
    between.observe(BigInt(n + 1), 250 * n + 20);
    carried(BigInt(n + 1));
  }
  assert.notEqual(between.decision().mining, 'on-demand');
});

test('a send held for a predicted block: quick only if the block that carried it came in the first half of the wait; a later block carrying it waited', () => {
  // Held for a block predicted 1 s after the send: seen 499 ms after it is quick, 500 ms is not.
  const held = (waited: number) => {
    const schedule = exact(2_000, 8); // block 8 at 16 s, block 9 due at 18 s
    for (let i = 0; i < 3; i++) {
      const n = 9 + i;
      const sendAt = n * 2_000 - 1_000;
      const carried = schedule.sent(sendAt, sendAt + 1_000);
      schedule.observe(BigInt(n), sendAt + waited);
      carried(BigInt(n));
    }
    return schedule.decision().mining;
  };
  assert.equal(held(499), 'on-demand');
  assert.equal(held(500), 'interval');
  // Sent just before a block was due and seen at once, but carried by the block after: it waited.
  const due = exact(2_000, 8);
  for (const n of [9, 10, 11]) {
    const carried = due.sent(n * 2_000 - 5, n * 2_000 + 2_000);
    due.observe(BigInt(n), n * 2_000 + 5);
    due.observe(BigInt(n + 1), n * 2_000 + 2_005);
    carried(BigInt(n + 1));
  }
  assert.equal(due.decision().mining, 'interval');
});

test('a 0.25 s chain, sends held for it one per block and seen late by a busy event loop: never taken for on-demand', () => {
  const schedule = exact(250, 8); // block 8 at 2 s
  const late = [10, 90, 40, 100, 0, 70, 100, 30, 60, 100, 20, 80];
  for (let n = 9; n <= 20; n++) {
    const due = schedule.nextBlockAt(n * 250 - 200)!;
    // Held for the block after next (a 250 ms margin and some preparation), sent when it closes.
    const carried = schedule.sent(due + 250 - 300, due + 250);
    schedule.observe(BigInt(n), n * 250 + late[n - 9]!);
    carried(BigInt(n + 1));
    const { mining, intervalMs } = schedule.decision();
    assert.ok(mining === 'interval' && Math.abs(intervalMs! - 250) <= 20, `block ${n}: ${mining} ${intervalMs}`);
  }
  // On a node mining on demand, the same sends' blocks come at once: three and it is known.
  const automine = exact(250, 8);
  let block = 8n;
  for (let i = 0; i < 3; i++) {
    const due = automine.nextBlockAt(2_000 + i * 250)!;
    const now = due + 250 - 300;
    const carried = automine.sent(now, due + 250);
    block += 1n;
    automine.observe(block, now + 10);
    carried(block);
  }
  assert.equal(automine.decision().mining, 'on-demand');
});

test('a 0.45 s chain looked at only while a receipt is awaited: heads seen late after a pause keep the schedule; seen late by a poll that looked in time, they drop it', () => {
  // Two heads in three are the first after a pause (nothing awaited: no poll), seen 300 ms after
  // their block; the third is polled for from 100 ms before it is due and seen 20 ms after.
  const run = (lookedInTime: boolean) => {
    const schedule = exact(450, 8); // block 8 at 3.6 s
    const kept: Array<number | undefined> = [];
    for (let n = 9; n <= 24; n++) {
      if (n % 3 === 0) {
        schedule.observe(BigInt(n - 1), n * 450 - 100);
        schedule.observe(BigInt(n), n * 450 + 20);
      } else {
        // A poll that looked 150 ms after the block was due and did not see it: the chain was late.
        if (lookedInTime) schedule.observe(BigInt(n - 1), n * 450 + 150);
        schedule.observe(BigInt(n), n * 450 + 300);
      }
      kept.push(schedule.intervalMs());
    }
    return { kept, schedule };
  };
  const paused = run(false);
  assert.ok(paused.kept.every((interval) => interval !== undefined && Math.abs(interval - 450) <= 10), `kept: ${paused.kept.join(' ')}`);
  const due = paused.schedule.nextBlockAt(24 * 450 + 300)!;
  // Within a tenth of a block or so: the heads timed here are 20 ms late, the first eight on time.
  assert.ok(Math.abs(due - 25 * 450) <= 50, `the next block due at ${due}, mined at ${25 * 450}`);
  assert.ok(run(true).kept.includes(undefined), 'late by the looks: dropped');
});

test('the rhythm forgotten (the platform\'s own start): a burst of blocks 65 ms apart learnt as an interval is dropped, the latest head kept, the rhythm learnt again from the heads after it', () => {
  const schedule = createBlockSchedule();
  for (let n = 1; n <= 5; n++) schedule.observe(BigInt(n), 1_000 + n * 65);
  assert.equal(schedule.decision().mining, 'interval', 'five heads 65 ms apart look like an interval');
  schedule.forgetRhythm();
  assert.deepEqual(schedule.decision(), { mining: 'unknown' });
  assert.equal(schedule.nextBlockAt(1_400), undefined);
  assert.equal(schedule.recentHead(1_400), 5n, 'the latest head is still known');
  // Heads 2 s apart after it: with the one kept, four of them, and the 2 s rhythm is learnt.
  schedule.observe(6n, 1_325 + 2_000);
  schedule.observe(7n, 1_325 + 4_000);
  assert.equal(schedule.decision().mining, 'unknown', 'three heads are too few to learn from');
  schedule.observe(8n, 1_325 + 6_000);
  assert.equal(schedule.intervalMs(), 2_000);
});
