import { TransactionReceiptNotFoundError, type Address, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import { ReceiptNotFinalError } from './receipt-not-final.ts';

// The receipt watcher's checks of what it waits for (receipt-watcher.ts): senders, replacements, confirmations.

export interface Waiter {
  resolve(receipt: TransactionReceipt): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export interface Waiting {
  waiters: Set<Waiter>;
  /** Looked up once after a head was read: from then on, only blocks after that head can hold it. */
  checked: boolean;
  /** Mined, waiting for its confirmations (only when more than one is asked). */
  receipt?: TransactionReceipt;
  /** Its sender and nonce, learnt from the node once it is seen pending while blocks go by. */
  sender?: { from: Address; nonce: number };
  /** New blocks scanned since it was first looked for (pushed heads only). */
  blocksSeen: number;
  /** When it was first waited for (local ms). */
  since: number;
}

/** What the checks read and settle: the watcher's waits, and how it ends them. */
export interface CheckContext {
  client: PublicClient;
  confirmations: bigint;
  waiters: Map<Hex, Waiting>;
  found(receipt: TransactionReceipt | null): void;
  finish(hash: Hex, outcome: { receipt: TransactionReceipt } | { error: Error }): void;
  unmined(): Array<[Hex, Waiting]>;
}

/** The sender and nonce of pending transactions, while the node still has them in its pool. */
export async function learnSenders({ client, found }: CheckContext, pending: Array<[Hex, Waiting]>): Promise<void> {
  await Promise.all(pending.filter(([, w]) => !w.sender).map(async ([hash, w]) => {
    const tx = await client.getTransaction({ hash }).catch(() => undefined);
    if (tx) w.sender = { from: tx.from, nonce: tx.nonce };
    // Mined in a block the scan did not read (pushed heads: sent just before a head the watcher
    // woke on): its receipt is asked for.
    if (tx?.blockNumber !== null && tx?.blockNumber !== undefined) {
      found(await client.getTransactionReceipt({ hash }).catch(() => null));
    }
  }));
}

/**
 * Unmined waits while blocks go by: a sender whose nonce on chain has passed the transaction's,
 * without a receipt for it, had another transaction of that nonce mined.
 */
export async function detectReplaced(ctx: CheckContext, pushed: boolean): Promise<void> {
const { client, found, finish, unmined } = ctx;
  // With pushed heads, a transaction mined in the next block (the usual case) costs no call of its
  // own: its sender is asked only once it stayed pending two blocks.
  const pending = unmined().filter(([, w]) => w.checked && (!pushed || w.blocksSeen >= 2));
  await learnSenders(ctx, pending);
  const senders = [...new Set(pending.flatMap(([, w]) => (w.sender ? [w.sender.from] : [])))];
  const used = new Map(await Promise.all(senders.map(async (from) => [from, await client.getTransactionCount({ address: from, blockTag: 'latest' })] as const)));
  await Promise.all(pending.map(async ([hash, w]) => {
    if (!w.sender || (used.get(w.sender.from) ?? 0) <= w.sender.nonce) return;
    // Only a node's "no such receipt" is one: not answering (or only nodes behind answering) is no conclusion.
    const receipt = await client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      throw error;
    });
    if (receipt) return found(receipt);
    finish(hash, { error: new ReceiptNotFinalError('replaced', hash, `${hash} was not mined: nonce ${w.sender.nonce} of ${w.sender.from} was used by another transaction`) });
  }));
}

/** A held receipt deep enough (or whose block is above the head: the chain got shorter) is checked again. */
export async function confirm({ client, confirmations, waiters, finish }: CheckContext, head: bigint): Promise<void> {
  const due = [...waiters].filter(([, w]) => w.receipt && (head >= w.receipt.blockNumber + confirmations - 1n || head < w.receipt.blockNumber));
  await Promise.all(due.map(async ([hash, waiting]) => {
    const held = waiting.receipt as TransactionReceipt;
    let now: TransactionReceipt | undefined;
    try {
      now = await client.getTransactionReceipt({ hash });
    } catch (error) {
      if (!(error instanceof TransactionReceiptNotFoundError)) return; // the node did not answer: next poll
    }
    if (now && now.blockHash === held.blockHash) {
      if (head >= now.blockNumber + confirmations - 1n) finish(hash, { receipt: now });
      return;
    }
    if (now) {
      waiting.receipt = now; // mined again in another block: its confirmations count from there
      return;
    }
    const pooled = await client.getTransaction({ hash }).then(() => true, () => false);
    finish(hash, {
      error: pooled
        ? new ReceiptNotFinalError('reorged', hash, `${hash} was mined in block ${held.blockNumber} (${held.blockHash}), which left the chain; it is pending again`)
        : new ReceiptNotFinalError('dropped', hash, `${hash} was mined in block ${held.blockNumber} (${held.blockHash}), which left the chain, and the node no longer has it`),
    });
  }));
}
