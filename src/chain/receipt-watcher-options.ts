import type { BlockSchedule } from './block-schedule.ts';
import type { HeadSource } from './head-source.ts';

export interface WaitOptions {
  /**
   * Sent before this wait began, by this process or another (recovery after a crash, a version found
   * by its receipt): it may be in a block long past that no scan of this watcher reads. Looked up by
   * its own receipt once, whatever the subscription; a wait without it is for a transaction just sent.
   */
  sentBefore?: boolean;
}

export interface ReceiptWatcherOptions {
  /** Blocks a receipt's block counts as, itself included, before it is final. Default 1: as soon as it is mined. */
  confirmations?: number;
  /**
   * New heads pushed by the node (a WebSocket `newHeads` subscription): each one starts a poll at
   * once instead of at the next interval. Called with the listener; answers how to unsubscribe.
   */
  heads?: (onHead: (number: bigint) => void) => () => void;
  /**
   * The network's `newHeads` subscription (head-source.ts). While it is up the watcher asks the
   * node for no head: each pushed head starts a scan of its block's receipts (one call per block
   * while anything is waited for), and a transaction new to it is looked for in the blocks already
   * read rather than by its own receipt. While it is down the watcher polls, as without it.
   */
  source?: HeadSource;
  /**
   * Told of every head read or pushed; while it knows when the next block is due, the watcher asks
   * for the head only from shortly before then (`pollMs` apart until it comes), not every `pollMs`
   * all block long: a few calls per block instead of one per `pollMs`.
   */
  schedule?: BlockSchedule;
}
