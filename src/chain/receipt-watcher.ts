import type { Hex, PublicClient, TransactionReceipt } from 'viem';
import { ReceiptNotFinalError } from './receipt-not-final.ts';
import { createBlockReceipts } from './block-receipts.ts';
import type { ReceiptWatcherOptions, WaitOptions } from './receipt-watcher-options.ts';
import { confirm, detectReplaced, learnSenders, type CheckContext, type Waiter, type Waiting } from './receipt-checks.ts';
import { createPushedBlocks } from './pushed-blocks.ts';

export { ReceiptNotFinalError } from './receipt-not-final.ts';
export type { ReceiptWatcherOptions, WaitOptions } from './receipt-watcher-options.ts';

/** Receipts of the transactions being waited for on one network. */
export interface ReceiptWatcher {
  /**
   * The receipt of `hash` once it is final: mined with `confirmations - 1` blocks on top and still
   * in the canonical chain (same block hash) at that depth. Rejects with a ReceiptNotFinalError
   * after `timeoutMs`, or at once when a mined receipt vanished.
   */
  wait(hash: Hex, timeoutMs: number, options?: WaitOptions): Promise<TransactionReceipt>;
  /** Stops polling; pending waits reject (`closed`). */
  close(): void;
}

/**
 * One watcher per network instead of one poller per transaction: while anything is waited for, it
 * asks the node for the head every `pollMs`, and at once when the node announces a new head
 * (`options.heads`). A transaction new to it is looked up once after that
 * read (found if mined at or before the head); from then on each new block's receipts are fetched
 * once (`eth_getBlockReceipts`, or per waiter where a node lacks it) and each waiter gets its own.
 * With `confirmations` N above 1, a mined receipt is held until the head is N-1 blocks past its
 * block, then fetched again: same block hash, it is final; mined again in another block (a reorg
 * that kept it), its count starts over there; gone, the wait rejects (`reorged` or `dropped`).
 * A transaction still unmined when new blocks come is checked against its sender's nonce on chain:
 * used up by another transaction, the wait rejects (`replaced`) instead of running out its time.
 */
export function createReceiptWatcher(client: PublicClient, pollMs: number, options: ReceiptWatcherOptions = {}): ReceiptWatcher {
  const confirmations = BigInt(Math.max(1, options.confirmations ?? 1));
  // Several waits of one hash are possible (a recovery beside a live send): each gets the receipt.
  const waiters = new Map<Hex, Waiting>();
  let scanned: bigint | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  /** A head was announced while a poll was running: poll again as soon as it ends. */
  let headMissed = false;
  /** When the scheduled poll runs (local ms). */
  let timerAt = 0;
  const schedule = options.schedule;
  const source = options.source;
  /** The head pushed by a subscription that is up: none is asked for then. */
  const pushedHead = () => (source?.up() ? source.latest()?.number : undefined);
  const recent = createPushedBlocks();
  /**
   * How long before a block is due the watcher starts asking for it: early enough that a schedule
   * that runs late sees the block come (a head sighted late would keep it late).
   */
  const earlyMs = () => Math.max(3 * pollMs, 100, (schedule?.intervalMs() ?? 0) / 10);

  function pollIn(ms: number): void {
    clearTimeout(timer);
    timerAt = Date.now() + ms;
    timer = setTimeout(() => void poll(), ms);
  }

  /** Until the next poll: `pollMs`, or, on a chain with a known schedule, until shortly before its next block. */
  function nextPollDelay(): number {
    const now = Date.now();
    const due = schedule?.nextBlockAt(now);
    return due === undefined ? pollMs : Math.max(pollMs, due - earlyMs() - now);
  }

  const finish = (hash: Hex, outcome: { receipt: TransactionReceipt } | { error: Error }) => {
    const waiting = waiters.get(hash);
    if (!waiting) return;
    waiters.delete(hash);
    for (const waiter of waiting.waiters) {
      clearTimeout(waiter.timer);
      if ('receipt' in outcome) waiter.resolve(outcome.receipt);
      else waiter.reject(outcome.error);
    }
  };

  const found = (receipt: TransactionReceipt | null) => {
    const waiting = receipt && waiters.get(receipt.transactionHash);
    if (!receipt || !waiting) return;
    if (confirmations <= 1n) finish(receipt.transactionHash, { receipt });
    else waiting.receipt ??= receipt;
  };

  const unmined = () => [...waiters].filter(([, w]) => !w.receipt);
  const { lookUp, ofBlock } = createBlockReceipts(client);
  const receiptsOf = async (block: bigint) => {
    const receipts = await ofBlock(block, () => unmined().map(([hash]) => hash));
    recent.remember(block, receipts);
    return receipts;
  };

  const checks: CheckContext = { client, confirmations, waiters, found, finish, unmined };
  /** Waits for transactions sent before them (`sentBefore`): looked up by their own receipts at the next poll. */
  const lookUps = new Set<Hex>();

  /** Whether the poll running took its head from the subscription. */
  // Stryker disable next-line BooleanLiteral: equivalent (set at the start of every poll, before it is read)
  let pushed = false;

  async function poll(): Promise<void> {
    timer = undefined;
    if (waiters.size === 0) return;
    polling = true;
    let failed = false;
    try {
      const pushedNow = pushedHead();
      pushed = pushedNow !== undefined;
      const head = pushedNow ?? await client.getBlockNumber({ cacheTime: 0 });
      if (!pushed) schedule?.observe(head, Date.now());
      // The chain got shorter (a reorg to fewer blocks): blocks from the new head on are new again,
      // the new head's own block among them (it replaced the one scanned at that height).
      if (scanned !== undefined && head < scanned) scanned = head - 1n;
      const fresh = [...waiters].filter(([, w]) => !w.checked);
      let scanning = fresh.length < waiters.size;
      if (pushed) {
        // Looked for in the blocks already read; a transaction sent before the latest head may be in
        // that block (read below, once for all of them, unless it was); one sent after it is in a
        // later block, which the scan reads. A watcher that was idle reads none of the blocks it slept through.
        for (const [hash] of fresh) found(recent.find(hash));
        if (fresh.length === waiters.size || scanned === undefined) {
          // Woken (nothing else waited for): the blocks pushed before these waits began cannot hold them.
          const from = recent.wakeFrom(Math.min(...fresh.map(([, w]) => w.since)), head);
          if (scanned === undefined || scanned < from) scanned = from;
        }
        scanning = true;
      } else {
        for (const receipt of await lookUp(fresh.map(([hash]) => hash))) found(receipt);
      }
      // Sent before their waits: a block no scan reads may hold them (with the subscription up, fresh
      // ones are looked for in blocks only; polled, fresh ones were just looked up).
      // Kept until their look-up was answered (a node that did not answer: at the next poll).
      const asked = [...lookUps];
      for (const receipt of await lookUp(asked.filter((hash) => !waiters.get(hash)?.receipt && (pushed || !fresh.some(([h]) => h === hash))))) found(receipt);
      for (const hash of asked) lookUps.delete(hash);
      for (const [, w] of fresh) w.checked = true;
      // Not mined yet: its sender and nonce, to tell later whether another transaction replaced it.
      if (!pushed) await learnSenders(checks, fresh.filter(([hash, w]) => !w.receipt && waiters.get(hash) === w));
      // Blocks after the last scan matter only to transactions already looked up before them.
      const newBlocks = scanned !== undefined && head > scanned;
      let read = scanned;
      if (scanning && scanned !== undefined) {
        for (let block = scanned + 1n; block <= head && unmined().length > 0; block++) {
          for (const receipt of await receiptsOf(block)) found(receipt);
          for (const [, w] of unmined()) if (w.checked) w.blocksSeen++;
          read = block;
        }
      }
      // Pushed, a new transaction is looked for in blocks only: those left unread (nothing was
      // waited for any more) are read when one comes. Polled, it is looked up by itself.
      scanned = pushed && read !== undefined && unmined().length === 0 ? read : head;
      // The scan stopped early (nothing left unmined then): the head's block, where a new one may be, is read now.
      if (pushed && fresh.some(([hash, w]) => waiters.get(hash) === w && !w.receipt) && !recent.has(head)) {
        for (const receipt of await receiptsOf(head)) found(receipt);
      }
      if (newBlocks && unmined().length > 0) await detectReplaced(checks, pushed);
      if (confirmations > 1n) await confirm(checks, head);
    } catch {
      // The node did not answer this time: the next poll tries again, each wait keeps its own deadline.
      failed = true;
    }
    polling = false;
    // While the subscription is up, the next head pushed starts the next poll (or, after a read that
    // failed, the poll interval).
    if (waiters.size > 0 && (headMissed || failed || pushedHead() === undefined)) pollIn(headMissed ? 0 : nextPollDelay());
    headMissed = false;
  }

  /** A new block: poll now (or right after the poll in flight), when anything is waited for. */
  function onNewHead(): void {
    if (waiters.size === 0) return;
    if (polling) {
      headMissed = true;
      return;
    }
    pollIn(0);
  }

  const unsubscribe = options.heads?.((number) => {
    schedule?.observe(number, Date.now());
    onNewHead();
  });
  const unsubscribeSource = source?.onHead((head) => {
    recent.pushed(head.number, head.at);
    schedule?.observe(head.number, head.at);
    // A head at or below the one scanned replaced blocks already read (a reorg): read again from it.
    if (scanned !== undefined && head.number <= scanned) scanned = head.number - 1n;
    onNewHead();
  });
  // The subscription went down: polling takes over at once (and stops once it is up again).
  const unwatchState = source?.onState((up) => { if (!up) onNewHead(); });

  return {
    wait(hash, timeoutMs, options = {}) {
      return new Promise<TransactionReceipt>((resolve, reject) => {
        if (options.sentBefore) {
          lookUps.add(hash);
          // A poll in flight may have passed its look-ups: another runs right after it.
          if (polling) headMissed = true;
        }
        const waiting = waiters.get(hash) ?? { waiters: new Set<Waiter>(), checked: false, blocksSeen: 0, since: Date.now() };
        waiters.set(hash, waiting);
        const waiter: Waiter = {
          resolve, reject,
          timer: setTimeout(() => {
            waiting.waiters.delete(waiter);
            if (waiting.waiters.size === 0 && waiters.get(hash) === waiting) waiters.delete(hash);
            const what = waiting.receipt ? `${confirmations} confirmations` : 'receipt';
            reject(new ReceiptNotFinalError('timeout', hash, `no ${what} for ${hash} within ${timeoutMs} ms`));
          }, timeoutMs),
        };
        waiting.waiters.add(waiter);
        // A poll in flight schedules the next one itself; an idle watcher starts at once, and one
        // waiting for a block still far off looks a new transaction up soon (it may be mined already).
        if (!polling && (!timer || (!waiting.checked && timerAt - Date.now() > pollMs))) pollIn(0);
      });
    },
    close() {
      unsubscribe?.();
      unsubscribeSource?.();
      unwatchState?.();
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const hash of [...waiters.keys()]) {
        finish(hash, { error: new ReceiptNotFinalError('closed', hash, `receipt watcher closed while waiting for ${hash}`) });
      }
    },
  };
}
