import { formatTransactionReceipt, numberToHex, type Hex, type PublicClient, type RpcTransactionReceipt, type TransactionReceipt } from 'viem';

/** Receipts of the transactions being waited for on one network. */
export interface ReceiptWatcher {
  /** The receipt of `hash` once it is mined; rejects after `timeoutMs`. */
  wait(hash: Hex, timeoutMs: number): Promise<TransactionReceipt>;
  /** Stops polling; pending waits reject. */
  close(): void;
}

interface Waiter {
  resolve(receipt: TransactionReceipt): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

interface Waiting {
  waiters: Set<Waiter>;
  /** Looked up once after a head was read: from then on, only blocks after that head can hold it. */
  checked: boolean;
}

/**
 * One watcher per network instead of one poller per transaction: while anything is waited for, it
 * asks the node for the head every `pollMs`. A transaction new to it is looked up once after that
 * read (found if mined at or before the head); from then on each new block's receipts are fetched
 * once (`eth_getBlockReceipts`, or per waiter where a node lacks it) and each waiter gets its own.
 */
export function createReceiptWatcher(client: PublicClient, pollMs: number): ReceiptWatcher {
  // Several waits of one hash are possible (a recovery beside a live send): each gets the receipt.
  const waiters = new Map<Hex, Waiting>();
  let scanned: bigint | undefined;
  let timer: NodeJS.Timeout | undefined;
  let polling = false;
  let blockReceipts = true;

  const settle = (receipt: TransactionReceipt | null) => {
    const waiting = receipt && waiters.get(receipt.transactionHash);
    if (!receipt || !waiting) return;
    waiters.delete(receipt.transactionHash);
    for (const waiter of waiting.waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(receipt);
    }
  };

  async function receiptsOf(block: bigint): Promise<TransactionReceipt[]> {
    if (blockReceipts) {
      try {
        const raw = await client.request({ method: 'eth_getBlockReceipts', params: [numberToHex(block)] } as never) as RpcTransactionReceipt[] | null;
        return (raw ?? []).map((r) => formatTransactionReceipt(r));
      } catch {
        blockReceipts = false; // this node lacks it: look each waiter up instead
      }
    }
    return lookUp([...waiters.keys()]);
  }

  async function lookUp(hashes: Hex[]): Promise<TransactionReceipt[]> {
    const found = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash }).catch(() => undefined)));
    return found.filter((r): r is TransactionReceipt => r !== undefined);
  }

  async function poll(): Promise<void> {
    timer = undefined;
    if (waiters.size === 0) return;
    polling = true;
    try {
      const head = await client.getBlockNumber({ cacheTime: 0 });
      const fresh = [...waiters].filter(([, w]) => !w.checked);
      const scanning = fresh.length < waiters.size;
      for (const receipt of await lookUp(fresh.map(([hash]) => hash))) settle(receipt);
      for (const [, w] of fresh) w.checked = true;
      // Blocks after the last scan matter only to transactions already looked up before them.
      if (scanning && scanned !== undefined) {
        for (let block = scanned + 1n; block <= head && waiters.size > 0; block++) {
          for (const receipt of await receiptsOf(block)) settle(receipt);
        }
      }
      scanned = head;
    } catch {
      // The node did not answer this time: the next poll tries again, each wait keeps its own deadline.
    }
    polling = false;
    if (waiters.size > 0) timer = setTimeout(() => void poll(), pollMs);
  }

  return {
    wait(hash, timeoutMs) {
      return new Promise<TransactionReceipt>((resolve, reject) => {
        const waiting = waiters.get(hash) ?? { waiters: new Set<Waiter>(), checked: false };
        waiters.set(hash, waiting);
        const waiter: Waiter = {
          resolve, reject,
          timer: setTimeout(() => {
            waiting.waiters.delete(waiter);
            if (waiting.waiters.size === 0 && waiters.get(hash) === waiting) waiters.delete(hash);
            reject(new Error(`no receipt for ${hash} within ${timeoutMs} ms`));
          }, timeoutMs),
        };
        waiting.waiters.add(waiter);
        // A poll in flight schedules the next one itself; an idle watcher starts at once.
        if (!timer && !polling) timer = setTimeout(() => void poll(), 0);
      });
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const [hash, waiting] of waiters) {
        for (const waiter of waiting.waiters) {
          clearTimeout(waiter.timer);
          waiter.reject(new Error(`receipt watcher closed while waiting for ${hash}`));
        }
      }
      waiters.clear();
    },
  };
}
