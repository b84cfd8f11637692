/**
 * When a chain mines its next block, learnt from the heads the platform already reads (the receipt
 * watcher's polls, a managed node's pushed heads): no call of its own. A chain that mines at
 * intervals (Ethereum's 12 s slots, Optimism and opBNB every 1–2 s, anvil `--block-time N`) shows
 * heads a regular time apart; one that mines on demand (anvil's default automine) does not, and has
 * no schedule.
 */
export interface BlockSchedule {
  /** The head `number`, seen at local time `at` (ms). Only its first sighting counts. */
  observe(number: bigint, at: number): void;
  /**
   * When the block after the latest head seen is expected (local ms; in the past when it is late),
   * or undefined while the chain shows no regular interval. After a long time without a sighting the
   * schedule is carried forward: the next expected block after `now`.
   */
  nextBlockAt(now: number): number | undefined;
  /** The interval between blocks (ms), once learnt. */
  intervalMs(): number | undefined;
  /** The latest head seen, if seen within the last `maxAgeMs` (default 10 s): a block at or below the head. */
  recentHead(now: number, maxAgeMs?: number): bigint | undefined;
}

export interface BlockScheduleOptions {
  /** Sightings kept (the most recent ones). */
  window?: number;
  /** Below this interval a chain counts as mining on demand: batching for its blocks gains nothing. */
  minIntervalMs?: number;
}

interface Sighting {
  number: bigint;
  at: number;
}

/**
 * The interval is the time per block between successive sightings, taken only when most agree
 * (within 25% of their median: a chain that mines on demand shows no such regularity), averaged over
 * those that do. A window where few agree drops the schedule; one in between (sightings made late
 * by a busy event loop) leaves the last one learnt in place. The phase is the earliest sighting each block allows: a poll sees a head some time
 * after it was mined, never before, so the smallest `at − (number − latest) × interval` over recent
 * sightings is the best estimate of when the latest block was mined.
 */
export function createBlockSchedule(options: BlockScheduleOptions = {}): BlockSchedule {
  const window = options.window ?? 16;
  const minIntervalMs = options.minIntervalMs ?? 500;
  const sightings: Sighting[] = [];
  let learnt: { interval: number; latestAt: number; latest: Sighting } | undefined;

  function learn(): void {
    if (sightings.length < 4) return;
    const perBlock: number[] = [];
    for (let i = 1; i < sightings.length; i++) {
      const a = sightings[i - 1]!;
      const b = sightings[i]!;
      perBlock.push((b.at - a.at) / Number(b.number - a.number));
    }
    perBlock.sort((x, y) => x - y);
    const median = perBlock[Math.floor(perBlock.length / 2)]!;
    // Most gaps agree with the median on a chain that mines at intervals (a late sighting or a missed
    // slot makes one or two disagree); on a chain that mines on demand few do.
    const agreeing = perBlock.filter((x) => Math.abs(x - median) <= median * 0.25);
    if (median < minIntervalMs || agreeing.length < perBlock.length * 0.4) {
      learnt = undefined;
      return;
    }
    if (agreeing.length < perBlock.length * 0.6) return;
    const interval = agreeing.reduce((sum, x) => sum + x, 0) / agreeing.length;
    const latest = sightings[sightings.length - 1]!;
    const latestAt = Math.min(...sightings.map((s) => s.at - Number(s.number - latest.number) * interval));
    learnt = { interval, latestAt, latest };
  }

  return {
    observe(number, at) {
      const last = sightings[sightings.length - 1];
      if (last && number <= last.number) {
        if (number === last.number) return;
        // The chain got shorter (a node that lost blocks, a reorg): start over from here.
        sightings.length = 0;
        learnt = undefined;
      }
      sightings.push({ number, at });
      if (sightings.length > window) sightings.shift();
      learn();
    },
    nextBlockAt(now) {
      if (!learnt) return undefined;
      const { interval, latestAt, latest } = learnt;
      const next = latestAt + interval;
      // Seen lately: the next block is due (or late). Long unseen: carry the schedule forward.
      if (now - latest.at < 2 * interval) return next;
      return latestAt + Math.ceil((now - latestAt) / interval) * interval;
    },
    intervalMs: () => learnt?.interval,
    recentHead(now, maxAgeMs = 10_000) {
      const last = sightings[sightings.length - 1];
      return last && now - last.at <= maxAgeMs ? last.number : undefined;
    },
  };
}
