import type { ChainClients } from './chain-clients.ts';
import type { NetworkName } from '#shared/networks.ts';

/**
 * Which block each settlement batch of a network is for, on a network we do not run whose blocks
 * come at a known interval (docs/decisions/settlement.md, "Settlement that follows the blocks" and
 * "Blocks of any length"): when a batch closes, whether a closed one can still reach its block, and
 * when a prepared one may be broadcast so that no two land in one block.
 */
export interface SettlementAim {
  /** How long a batch opened now stays open, and the block it is held for (its expected local time), when held for one. */
  closeDelay(network: NetworkName): { delay: number; expectedAt?: number };
  /**
   * A batch held for `expectedAt` whose window has passed, now: undefined when it can still reach that
   * block (and no broadcast since lands in it), else the next block it can reach and how long it
   * stays open for it.
   */
  reaim(network: NetworkName, expectedAt: number): { expectedAt: number; delay: number } | undefined;
  /** A batch of the network took this long from closing to broadcast (ms), any wait for its turn left out. */
  notePreparation(network: NetworkName, ms: number): void;
  /**
   * How long a batch prepared now for the block expected at `expectedAt` waits before its broadcast
   * (0: at once): until the block the network's previous broadcast lands in is due, so that this one
   * lands in a later block.
   */
  turnIn(network: NetworkName, expectedAt: number): number;
  /** The batch is broadcast now: answers the block it lands in (its expected local time), taken from the next batch. */
  broadcast(network: NetworkName): number | undefined;
  /**
   * The batch held for the latest block aimed at left full, before its window passed: it takes the
   * next block it can reach, not the later one it was held for, and the next batch aims from there
   * (on blocks not short: see `short`).
   */
  leftFull(network: NetworkName): void;
}

export function createSettlementAim(chains: ChainClients, settings: { windowMs: number; blockMarginMs: number }): SettlementAim {
  const { windowMs, blockMarginMs } = settings;
  /** How long the last few batches of each network took from closing to broadcast (ms). */
  const preparations = new Map<NetworkName, number[]>();
  /** The block (its expected local time) the latest batch of each network was held for. */
  const aimedAt = new Map<NetworkName, number>();
  /** The block (its expected local time) the latest broadcast of each network lands in. */
  const landsAt = new Map<NetworkName, number>();
  /** When the latest broadcast of each network was. */
  const sentAt = new Map<NetworkName, number>();

  /** The interval of a network that keeps a schedule the platform follows (not one we run). */
  const intervalOf = (network: NetworkName): number | undefined => (chains[network].managed ? undefined : chains[network].blocks.intervalMs());

  /**
   * How long a batch of the network takes from closing to broadcast: the slowest of the last few, at
   * most half a block or half a second, whichever is longer (a block shorter than that is aimed at a
   * few blocks ahead: docs/decisions/settlement.md).
   */
  const preparationOf = (network: NetworkName, interval: number): number =>
    Math.min(Math.max(0, ...(preparations.get(network) ?? [])), Math.max(interval / 2, 500));

  /**
   * A block shorter than twice the margin and the slowest recent preparation (a batch is open about
   * a block and closes that long before its block: the next one is aimed before it is broadcast):
   * batches are prepared a few blocks ahead, early or late by a block as their
   * preparations vary, and take turns by the blocks their broadcasts land in. On a longer block a
   * late batch is the exception: it may share the next block with that block's own batch (a few
   * percent of gas) rather than push every later batch a block on (a whole block of latency).
   */
  const short = (network: NetworkName, interval: number): boolean => interval < 2 * blockMarginMs + preparationOf(network, interval);
  /** The block the latest broadcast lands in, on a network of short blocks. */
  const takenOf = (network: NetworkName, interval: number): number => (short(network, interval) ? landsAt.get(network) ?? -Infinity : -Infinity);

  /** The first predicted block a transaction sent at `now` lands in. */
  const reachableAt = (network: NetworkName, now: number): number | undefined => {
    const interval = intervalOf(network);
    let block = interval === undefined ? undefined : chains[network].blocks.nextBlockAt(now);
    if (block === undefined || interval === undefined) return undefined;
    // Sent within a quarter block (100 ms at most) of a predicted block, it may land in that block
    // or the next: it takes the next.
    while (block <= now + Math.min(interval / 4, 100)) block += interval;
    return block;
  };

  return {
    /**
     * Until `blockMarginMs`, plus the time a batch takes to prepare, before the next block it can still
     * reach (the one after, when that moment has passed), so one transaction per block carries every
     * transfer accepted meanwhile and none waits for a later block than it would have reached alone.
     * Otherwise (a chain that mines on demand, or whose interval is not learnt yet): `windowMs`.
     */
    closeDelay(network) {
      const now = Date.now();
      const interval = intervalOf(network);
      const due = interval === undefined ? undefined : chains[network].blocks.nextBlockAt(now);
      if (due === undefined || interval === undefined) return { delay: windowMs };
      const preparation = preparationOf(network, interval);
      let close = due - blockMarginMs - preparation;
      // A block a previous batch was held for, or (short blocks) that a broadcast lands in, is not
      // aimed at again (its prediction may have moved a little since): one settlement transaction per block.
      const taken = Math.max(aimedAt.get(network) ?? -Infinity, takenOf(network, interval));
      while (close < now + windowMs || close + blockMarginMs + preparation < taken + interval / 2) close += interval;
      const expectedAt = close + blockMarginMs + preparation;
      aimedAt.set(network, expectedAt);
      return { delay: close - now, expectedAt };
    },

    reaim(network, expectedAt) {
      const interval = intervalOf(network);
      if (interval === undefined) return undefined;
      const now = Date.now();
      const preparation = preparationOf(network, interval);
      // Nor, on short blocks, is a block a broadcast since lands in (one that was late for its own block).
      const taken = takenOf(network, interval) + interval / 2;
      const reachable = (at: number) => now + preparation <= at - blockMarginMs / 2 && at >= taken;
      if (reachable(expectedAt)) return undefined;
      let next = expectedAt;
      while (!reachable(next)) next += interval;
      aimedAt.set(network, next);
      return { expectedAt: next, delay: Math.max(0, next - blockMarginMs - preparation - now) };
    },

    notePreparation(network, ms) {
      const recent = preparations.get(network) ?? [];
      recent.push(ms);
      if (recent.length > 8) recent.shift();
      preparations.set(network, recent);
    },

    turnIn(network, expectedAt) {
      const interval = intervalOf(network);
      const previous = landsAt.get(network);
      const last = sentAt.get(network);
      if (interval === undefined || previous === undefined || last === undefined || !short(network, interval)) return 0;
      // Past the previous broadcast's block by a tenth of a block (a prediction errs late, if at all:
      // it is the earliest a head was seen), and nine tenths of a block after that broadcast (a
      // prediction carried far from the heads seen, on a starved event loop, may be a block off: two
      // sends that far apart share a block one time in ten at most; not past the batch's own margin);
      // never more than two blocks on.
      const turn = Math.max(previous + interval / 10, Math.min(last + interval * 0.9, expectedAt - blockMarginMs));
      return Math.min(2 * interval, Math.max(0, turn - Date.now()));
    },

    broadcast(network) {
      const now = Date.now();
      const block = reachableAt(network, now);
      if (block === undefined) return undefined;
      landsAt.set(network, block);
      sentAt.set(network, now);
      return block;
    },

    leftFull(network) {
      // Otherwise each full batch (more transfers a block than one batch holds: 100/s on 2 s blocks)
      // would push the next one's block a block further than it lands, and the first batch not full
      // after a busy spell would wait as many blocks (12 s measured at 100/s for 10 s). Short blocks
      // take turns by the blocks broadcasts land in instead, and are left as they are.
      const interval = intervalOf(network);
      if (interval === undefined || short(network, interval)) return;
      const block = reachableAt(network, Date.now());
      const aimed = aimedAt.get(network);
      if (block !== undefined && aimed !== undefined && block < aimed) aimedAt.set(network, block);
    },
  };
}
