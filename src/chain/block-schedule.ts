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
   * The platform is about to broadcast a transaction, at `at`, held for the block predicted at
   * `expectedAt` (when it was). Answers what to call with the number of the block that carried it
   * (its receipt's), once known: that block tells how the node mines. The block right after the
   * head seen at the send, carrying no other send of ours, seen at once (before half the wait for
   * the predicted block; for a send not held, within `quickMs` and a quarter of the time the chain
   * had sat at that head) is a node that mines on demand; three such in a row and the schedule is
   * dropped, and stays dropped while sends keep making blocks at once.
   */
  sent(at: number, expectedAt?: number): (block: bigint) => void;
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
  /**
   * The heads seen so far tell nothing of the chain's rhythm: the platform's own start (its contracts
   * deployed one after another, each mined at its send on a node that mines on demand, a block every
   * few tens of milliseconds that only looks like an interval). The rhythm is learnt again from the
   * heads after the latest.
   */
  forgetRhythm(): void;
}

export interface BlockScheduleOptions {
  /** Sightings kept (the most recent ones): a node that changes its rhythm is learnt again within about half as many blocks. */
  window?: number;
  /** A send not held for a predicted block, whose block was seen within this: evidence of a node mining on demand. */
  quickMs?: number;
  /**
   * How late a sighting may be and still fit the schedule, at least (a quarter interval otherwise):
   * a poll on a busy event loop sees a 0.25 s chain's heads up to about this late.
   */
  lateMs?: number;
}

interface Sighting {
  number: bigint;
  at: number;
  /**
   * Late for the schedule learnt when it came, with no look since its block was due (the look before
   * it, if any, came before that by the tolerance): late for want of a look, not timed by one.
   */
  excused?: boolean;
}

/** Sends in a row whose block came at once before a node counts as mining on demand. */
const onDemandAfter = 3;
/** Blocks known to carry a send of ours, kept to tell a block two sends share. */
const carriedKept = 32;

/**
 * The interval is the median of the time per block between every pair of sightings (Theil–Sen: a
 * few late sightings, from a busy event loop or a slow poll, move it little), taken only when the
 * sightings fit it: three quarters within a quarter interval (or `lateMs`, when longer) of the
 * earliest time each block allows. Once learnt, it is kept until fewer than half are consistent
 * with it: a sighting late for its block is evidence against the schedule only when a look made
 * after that block was due (by the tolerance) still saw the head before it. A watcher that polls
 * only while a receipt is awaited (and the reads that found the receipt saw a newer head than its
 * own) sights the first head after an idle spell at any time: late for want of a look, not a
 * chain off its rhythm (docs/decisions/settlement.md, "Heads seen after a pause"). No interval is too short:
 * what tells a chain that mines every 0.25 s from one that mines on demand is not its rhythm but
 * how its blocks answer the platform's sends (see `sent`).
 * The phase is that earliest time: a poll sees a head some time after it was mined, never before, so
 * the smallest `at − (number − latest) × interval` is the best estimate of when the latest block was
 * mined. A node whose blocks follow the platform's sends at once (each send makes a block) mines on
 * demand whatever rhythm those sends had: its sightings are forgotten and no schedule is given until
 * a send waits for its block again.
 */
export function createBlockSchedule(options: BlockScheduleOptions = {}): BlockSchedule {
  const window = options.window ?? 8;
  const quickMs = options.quickMs ?? 150;
  const lateMs = options.lateMs ?? 100;
  const sightings: Sighting[] = [];
  let learnt: { interval: number; latestAt: number; latest: Sighting } | undefined;
  /** The latest look at the chain's head (any `observe`, a head seen again included). */
  let lastLook: { number: bigint; at: number } | undefined;
  /** Blocks that carried a send of ours (the latest `carriedKept`). */
  const carried = new Set<bigint>();
  /** Sends in a row whose block came at once. */
  let quickInRow = 0;
  let onDemand = false;

  function learn(): void {
    // While a schedule is learnt, it is refitted to the heads a look timed, not those seen late after a pause.
    const timed = learnt ? sightings.filter((s) => !s.excused) : sightings;
    if (timed.length < 4) {
      // Too few timed heads to refit: the schedule learnt stands while two of the window's heads are timed.
      if (learnt && timed.length < 2) learnt = undefined;
      return;
    }
    const slopes: number[] = [];
    // Stryker disable next-line EqualityOperator: at i = timed.length there is no j after it (equivalent)
    for (let i = 0; i < timed.length; i++) {
      for (let j = i + 1; j < timed.length; j++) {
        const a = timed[i]!;
        const b = timed[j]!;
        slopes.push((b.at - a.at) / Number(b.number - a.number));
      }
    }
    slopes.sort((x, y) => x - y);
    const interval = slopes[Math.floor(slopes.length / 2)]!;
    // Heads seen in the same millisecond: no rhythm to predict from.
    if (interval < 1) {
      learnt = undefined;
      return;
    }
    const latest = timed[timed.length - 1]!;
    const minedAt = timed.map((s) => s.at - Number(s.number - latest.number) * interval);
    const latestAt = Math.min(...minedAt);
    // On a chain that mines at intervals each sighting is a little after its block's time; on one
    // that mines on demand (sends at random moments) the times scatter over whole intervals.
    const fitting = minedAt.filter((at) => at - latestAt <= Math.max(interval / 4, lateMs)).length;
    // Heads seen late after a pause in the looking are no evidence against the schedule.
    const consistent = fitting + sightings.length - timed.length;
    // Learnt when three quarters fit; dropped when fewer than half are consistent with it. In between
    // (a few sightings made late by a busy event loop), a schedule learnt stays, at the interval and phase of now.
    if (fitting >= timed.length * 0.75 || (learnt && consistent >= sightings.length / 2)) learnt = { interval, latestAt, latest };
    else if (consistent < sightings.length / 2) learnt = undefined;
  }

  /** Whether a head seen now is late for the schedule learnt only for want of a look (see `Sighting.excused`). */
  function excused(number: bigint, at: number): boolean {
    if (!learnt) return false;
    const { interval, latestAt, latest } = learnt;
    const tolerance = Math.max(interval / 4, lateMs);
    const dueOf = (block: bigint) => latestAt + Number(block - latest.number) * interval;
    if (at - dueOf(number) <= tolerance) return false;
    // A look after the block following the one it saw was due (by the tolerance): the chain was late.
    return !(lastLook && lastLook.at > dueOf(lastLook.number + 1n) + tolerance);
  }

  /** The block that carried a send: there at once (a node mining on demand), or did it wait? */
  function judge(send: { at: number; expectedAt: number | undefined; head: Sighting | undefined; scheduled: boolean }, block: bigint): void {
    const shared = carried.has(block);
    carried.add(block);
    if (carried.size > carriedKept) carried.delete(carried.values().next().value as bigint);
    // A send made before any head was seen, or whose block is no longer among the sightings kept
    // (or was lost with a shorter chain): nothing to judge it by.
    const seen = sightings.find((s) => s.number >= block);
    if (!send.head || !seen || block <= send.head.number) return;
    // While the chain keeps a schedule, a send it did not hold (a contract account's transfer, a
    // mint) is aimed at no block: how soon its block came tells nothing.
    if (send.expectedAt === undefined && send.scheduled) return;
    const waited = seen.at - send.at;
    // Made by the send: the very block after the head seen then, no other send of ours in it.
    const next = block === send.head.number + 1n && !shared;
    const quick = send.expectedAt === undefined
      ? next && waited <= quickMs && waited <= (seen.at - send.head.at) / 4
      : next && waited < (send.expectedAt - send.at) / 2;
    if (onDemand) {
      // The verdict ends with a send whose block was not there at once; the heads seen meanwhile
      // were the sends' own blocks, and the chain's rhythm is learnt from here.
      if (waited > quickMs) {
        quickInRow = 0;
        onDemand = false;
        sightings.splice(0, sightings.length - 1);
        learnt = undefined;
      }
      return;
    }
    if (!quick) {
      quickInRow = 0;
      return;
    }
    quickInRow++;
    if (quickInRow >= onDemandAfter) {
      onDemand = true;
      // What was learnt came from blocks the sends made: start over from the latest one.
      sightings.splice(0, sightings.length - 1);
      learnt = undefined;
    }
  }

  const active = () => (onDemand ? undefined : learnt);

  return {
    forgetRhythm() {
      sightings.splice(0, sightings.length - 1);
      learnt = undefined;
    },
    observe(number, at) {
      const last = sightings[sightings.length - 1];
      if (last && number <= last.number) {
        if (number === last.number) {
          lastLook = { number, at };
          return;
        }
        // The chain got shorter (a node that lost blocks, a reorg): start over from here.
        sightings.length = 0;
        learnt = undefined;
        carried.clear();
        lastLook = undefined;
      }
      sightings.push({ number, at, excused: excused(number, at) });
      lastLook = { number, at };
      if (sightings.length > window) sightings.shift();
      learn();
    },
    sent(at, expectedAt) {
      const send = { at, expectedAt, head: sightings[sightings.length - 1], scheduled: active() !== undefined };
      let judged = false;
      return (block) => {
        if (judged) return;
        judged = true;
        judge(send, block);
      };
    },
    nextBlockAt(now) {
      const schedule = active();
      if (!schedule) return undefined;
      const { interval, latestAt, latest } = schedule;
      // After the latest head seen (a later one than the schedule's latest timed head, when seen late after a pause).
      const head = sightings[sightings.length - 1] ?? latest;
      const next = latestAt + (Number(head.number - latest.number) + 1) * interval;
      // Seen lately: the next block is due (or late). Long unseen: carry the schedule forward.
      if (now - head.at < 2 * interval) return next;
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
