import type { Hex, TransactionReceipt } from 'viem';

/** Blocks whose receipts are kept after their scan: a transaction new to the watcher is looked for there first. */
const keptBlocks = 8;
/**
 * Pushed heads: a transaction is waited for right after its broadcast was answered, so a block pushed
 * more than this before its wait began cannot hold it (a broadcast answered later than this is found
 * by its sender's check two blocks on, or by the waiter's look-up when its wait ends).
 */
const broadcastSlackMs = 2_000;
/** Blocks read at most when a watcher that was idle wakes (a chain mining each send at once). */
const wakeBlocks = 32n;

/**
 * With pushed heads, what the receipt watcher knows of recent blocks: the receipts of those it read
 * (a transaction new to it is looked for there first) and when each head was pushed (which blocks a
 * transaction waited for from a given time may be in).
 */
export function createPushedBlocks() {
  const read = new Map<bigint, TransactionReceipt[]>();
  const pushedAt = new Map<bigint, number>();
  return {
    remember(block: bigint, receipts: TransactionReceipt[]): void {
      read.set(block, receipts);
      for (const kept of [...read.keys()]) if (kept <= block - BigInt(keptBlocks) || kept > block) read.delete(kept);
    },
    has: (block: bigint) => read.has(block),
    find(hash: Hex): TransactionReceipt | null {
      for (const receipts of read.values()) {
        const receipt = receipts.find((r) => r.transactionHash === hash);
        if (receipt) return receipt;
      }
      return null;
    },
    pushed(number: bigint, at: number): void {
      pushedAt.set(number, at);
      while (pushedAt.size > 64) pushedAt.delete(pushedAt.keys().next().value as bigint);
    },
    /**
     * The block after which a transaction waited for since `since` (local ms) may be: the highest
     * pushed more than `broadcastSlackMs` before; none known that early, at most `wakeBlocks` back
     * (none pushed yet: the head's block).
     */
    wakeFrom(since: number, head: bigint): bigint {
      let from: bigint | undefined;
      for (const [number, at] of pushedAt) if (at < since - broadcastSlackMs && number < head && (from === undefined || number > from)) from = number;
      from ??= pushedAt.size > 0 ? head - wakeBlocks : head - 1n;
      if (from < head - wakeBlocks) from = head - wakeBlocks;
      return from < -1n ? -1n : from;
    },
  };
}
