/**
 * When a chain mines its next block, learnt from the heads the platform already reads (the receipt
 * watcher's polls, a managed node's pushed heads) and checked against the node at each settlement
 * the platform sends: no call of its own. A chain that mines at intervals (Ethereum's 12 s slots,
 * Optimism and opBNB every 1–2 s, anvil `--block-time N`) shows heads a regular time apart; one that
 * mines on demand (anvil's default automine) does not, and has no schedule, even when the platform's
 * own sends come regularly (each of them makes a block at once: see `sent`).
 */
export interface BlockSchedule {
  /** The head `number`, seen at local time `at` (ms). Only its first sighting counts. */
  observe(number: bigint, at: number): void;
  /**
   * The platform broadcast a transaction at `at`, held for the block predicted at `expectedAt` (when
   * it was). The first new head seen after it tells how the node mines: a block seen right after the
   * send (well before the predicted one) is a node that mines on demand; three such in a row and the
   * schedule is dropped, and stays dropped while sends keep making blocks at once.
   */
  sent(at: number, expectedAt?: number): void;
  /**
   * When the block after the latest head seen is expected (local ms; in the past when it is late),
   * or undefined while the chain shows no regular interval. After a long time without a sighting the
   * schedule is carried forward: the next expected block after `now`.
   */
  nextBlockAt(now: number): number | undefined;
  /** The interval between blocks (ms), once learnt (undefined on a node that mines on demand). */
  intervalMs(): number | undefined;
  /** What the schedule holds the node for now, and the interval behind it. */
  decision(): { mining: 'interval' | 'on-demand' | 'unknown'; intervalMs?: number };
  /** The latest head seen, if seen within the last `maxAgeMs` (default 10 s): a block at or below the head. */
  recentHead(now: number, maxAgeMs?: number): bigint | undefined;
}

export interface BlockScheduleOptions {
  /** Sightings kept (the most recent ones): a node that changes its rhythm is learnt again within about half as many blocks. */
  window?: number;
  /** Below this interval a chain counts as mining on demand: batching for its blocks gains nothing. */
  minIntervalMs?: number;
  /** A send not held for a predicted block, followed by a new head within this: evidence of a node mining on demand. */
  quickMs?: number;
}

interface Sighting {
  number: bigint;
  at: number;
}

/** Sends in a row whose block came at once before a node counts as mining on demand. */
const onDemandAfter = 3;

/**
 * The interval is the median of the time per block between every pair of sightings (Theil–Sen: a
 * few late sightings, from a busy event loop or a slow poll, move it little), taken only when the
 * sightings fit it: three quarters within a quarter interval of the earliest time each block allows
 * (and kept until fewer than half do).
 * The phase is that earliest time: a poll sees a head some time after it was mined, never before, so
 * the smallest `at − (number − latest) × interval` is the best estimate of when the latest block was
 * mined. A node whose blocks follow the platform's sends at once (each send makes a block) mines on
 * demand whatever rhythm those sends had: its sightings are forgotten and no schedule is given until
 * a send waits for its block again.
 */
export function createBlockSchedule(options: BlockScheduleOptions = {}): BlockSchedule {
  const window = options.window ?? 8;
  const minIntervalMs = options.minIntervalMs ?? 500;
  const quickMs = options.quickMs ?? 150;
  const sightings: Sighting[] = [];
  let learnt: { interval: number; latestAt: number; latest: Sighting } | undefined;
  /** The send whose block has not been seen yet: when, the head then, and the block it was held for. */
  let pendingSend: { at: number; head: bigint | undefined; expectedAt: number | undefined } | undefined;
  /** Sends in a row whose block came at once. */
  let quickInRow = 0;
  let onDemand = false;

  function learn(): void {
    if (sightings.length < 4) return;
    const slopes: number[] = [];
    // Stryker disable next-line EqualityOperator: at i = sightings.length there is no j after it (equivalent)
    for (let i = 0; i < sightings.length; i++) {
      for (let j = i + 1; j < sightings.length; j++) {
        const a = sightings[i]!;
        const b = sightings[j]!;
        slopes.push((b.at - a.at) / Number(b.number - a.number));
      }
    }
    slopes.sort((x, y) => x - y);
    const interval = slopes[Math.floor(slopes.length / 2)]!;
    if (interval < minIntervalMs) {
      learnt = undefined;
      return;
    }
    const latest = sightings[sightings.length - 1]!;
    const minedAt = sightings.map((s) => s.at - Number(s.number - latest.number) * interval);
    const latestAt = Math.min(...minedAt);
    // On a chain that mines at intervals each sighting is a little after its block's time; on one
    // that mines on demand (sends at random moments) the times scatter over whole intervals.
    const fitting = minedAt.filter((at) => at - latestAt <= interval / 4).length;
    // Learnt when three quarters fit; dropped when fewer than half do. In between (a few sightings
    // made late by a busy event loop), the schedule learnt last stays as it was.
    if (fitting >= sightings.length * 0.75) learnt = { interval, latestAt, latest };
    else if (fitting < sightings.length / 2) learnt = undefined;
  }

  /** The first new head after a send: was it there at once (a node mining on demand), or did it wait? */
  function judgeSend(number: bigint, at: number): void {
    const send = pendingSend;
    // `number` is above the latest head seen (observe passes no other), which is at or above the send's.
    if (!send || send.head === undefined) return;
    pendingSend = undefined;
    // A block due before the send (mined, just not seen yet) tells nothing about the send.
    if (learnt && !onDemand) {
      const dueAt = learnt.latestAt + Number(number - learnt.latest.number) * learnt.interval;
      if (dueAt <= send.at) return;
    }
    const waited = at - send.at;
    const quick = send.expectedAt === undefined ? waited <= quickMs : waited < (send.expectedAt - send.at) / 2;
    if (!quick) {
      quickInRow = 0;
      onDemand = false;
      return;
    }
    quickInRow++;
    if (quickInRow >= onDemandAfter && !onDemand) {
      onDemand = true;
      // What was learnt came from blocks the sends made: start over from the latest one.
      sightings.splice(0, sightings.length - 1);
      learnt = undefined;
    }
  }

  const active = () => (onDemand ? undefined : learnt);

  return {
    observe(number, at) {
      const last = sightings[sightings.length - 1];
      if (last && number <= last.number) {
        if (number === last.number) return;
        // The chain got shorter (a node that lost blocks, a reorg): start over from here.
        sightings.length = 0;
        learnt = undefined;
        pendingSend = undefined;
      }
      judgeSend(number, at);
      sightings.push({ number, at });
      if (sightings.length > window) sightings.shift();
      learn();
    },
    sent(at, expectedAt) {
      pendingSend = { at, head: sightings[sightings.length - 1]?.number, expectedAt };
    },
    nextBlockAt(now) {
      const schedule = active();
      if (!schedule) return undefined;
      const { interval, latestAt, latest } = schedule;
      const next = latestAt + interval;
      // Seen lately: the next block is due (or late). Long unseen: carry the schedule forward.
      if (now - latest.at < 2 * interval) return next;
      return latestAt + Math.ceil((now - latestAt) / interval) * interval;
    },
    intervalMs: () => active()?.interval,
    decision() {
      if (onDemand) return { mining: 'on-demand' };
      return learnt ? { mining: 'interval', intervalMs: learnt.interval } : { mining: 'unknown' };
    },
    recentHead(now, maxAgeMs = 10_000) {
      const last = sightings[sightings.length - 1];
      return last && now - last.at <= maxAgeMs ? last.number : undefined;
    },
  };
}
