import { createPublicClient, formatBlock, webSocket, type Hex, type RpcBlock, type WebSocketTransport } from 'viem';

/** A head the node pushed: what the platform reads of it instead of asking. */
export interface PushedHead {
  number: bigint;
  hash: Hex;
  parentHash: Hex;
  /** The block's time (s), from its header: the block schedule and the receipts' block times need no header read. */
  timestamp: bigint;
  /** The block's base fee (EIP-1559), null on a chain without one: a fee estimate needs no block read. */
  baseFeePerGas: bigint | null;
  /** When it was pushed (local ms). */
  at: number;
  /** The header as the node sent it (JSON-RPC fields). */
  rpc: RpcBlock;
}

/** One network's `newHeads` subscription, made again with backoff while it is down. */
export interface HeadSource {
  /** True while the subscription is made (heads come pushed); false while it is down and being made again. */
  up(): boolean;
  /** The latest head pushed by the subscription up now (none yet after it was made again). */
  latest(): PushedHead | undefined;
  /** The recent heads pushed (a few dozen), by hash: a block's time without asking. */
  byHash(hash: Hex): PushedHead | undefined;
  /** How many times the subscription was made: more than once after it dropped. */
  subscriptions(): number;
  /**
   * How many heads were pushed that do not follow the one before (at or below its height, or its
   * child in number with another parent): the chain went back (a reorg, a node that lost blocks),
   * counted even when it grew past its old head before anyone looked.
   */
  wentBack(): number;
  /** Told of each head pushed; answers how to stop. */
  onHead(listener: (head: PushedHead) => void): () => void;
  /** Told each time the subscription comes up or goes down; answers how to stop. */
  onState(listener: (up: boolean) => void): () => void;
  close(): void;
}

export interface HeadSourceOptions {
  /** The `ws://` or `wss://` URL (anvil serves WebSocket on its HTTP port). */
  url: string;
  /** The first wait before making a dropped subscription again; doubled each failure, up to `maxBackoffMs`. */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** Told of each call sent over the socket (`eth_subscribe`), for `vixpay_node_rpc_calls_total`. */
  onRpcCall?: (method: string) => void;
  now?: () => number;
}

/** Heads kept by hash. */
const keptHeads = 64;

/**
 * The node's new heads over WebSocket (`eth_subscribe` `newHeads`), through viem's webSocket transport.
 * The subscription is made directly (`transport.subscribe`, what viem's `watchBlocks({ poll: false })`
 * does inside) so that the platform knows when it is up: only then does polling stop. A dropped
 * socket or a refused subscription is made again after 1 s, then 2, 4… up to 30 s, and from its
 * first success the waits start over; viem's own reconnection is off (one loop, ours).
 */
export function createHeadSource(options: HeadSourceOptions): HeadSource {
  const now = options.now ?? Date.now;
  const minBackoffMs = options.minBackoffMs ?? 1_000;
  const maxBackoffMs = options.maxBackoffMs ?? 30_000;
  const headListeners = new Set<(head: PushedHead) => void>();
  const stateListeners = new Set<(up: boolean) => void>();
  const heads = new Map<Hex, PushedHead>();
  let latest: PushedHead | undefined;
  /** The head pushed before, kept across a drop (`latest` is not): the next one is compared with it. */
  let previous: PushedHead | undefined;
  let back = 0;
  let isUp = false;
  let made = 0;
  let closed = false;
  let backoffMs = minBackoffMs;
  let retry: NodeJS.Timeout | undefined;
  /** The subscription being made or up: its socket, closed when it drops. */
  let current: { close(): void } | undefined;

  const setUp = (value: boolean) => {
    if (isUp === value) return;
    isUp = value;
    for (const listener of stateListeners) listener(value);
  };

  const push = (raw: RpcBlock) => {
    const block = formatBlock(raw);
    if (block.number === null || block.hash === null) return;
    const head: PushedHead = {
      number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp,
      baseFeePerGas: block.baseFeePerGas ?? null, at: now(), rpc: raw,
    };
    heads.set(head.hash, head);
    while (heads.size > keptHeads) heads.delete(heads.keys().next().value as Hex);
    if (previous && head.hash !== previous.hash
      && (head.number <= previous.number || (head.number === previous.number + 1n && head.parentHash !== previous.hash))) back++;
    previous = head;
    latest = head;
    for (const listener of headListeners) listener(head);
  };

  const dropped = (attempt: { close(): void }) => {
    if (current !== attempt) return; // an older attempt's late error
    current = undefined;
    attempt.close();
    // Heads missed meanwhile: the next one pushed, not the last one before the drop, is the head.
    latest = undefined;
    setUp(false);
    if (closed || retry) return;
    retry = setTimeout(() => { retry = undefined; subscribe(); }, backoffMs);
    retry.unref();
    backoffMs = Math.min(maxBackoffMs, backoffMs * 2);
  };

  function subscribe(): void {
    if (closed) return;
    const transport = webSocket(options.url, { keepAlive: false, reconnect: false, retryCount: 0 });
    const client = createPublicClient({ transport });
    let socketClosed = false;
    const attempt = {
      close() {
        if (socketClosed) return;
        socketClosed = true;
        void client.transport.getRpcClient().then((socket) => socket.close(), () => undefined);
      },
    };
    current = attempt;
    options.onRpcCall?.('eth_subscribe');
    (client.transport as ReturnType<WebSocketTransport>['value'] & object).subscribe({
      params: ['newHeads'],
      onData: (data: { result?: RpcBlock }) => { if (current === attempt && data.result) push(data.result); },
      onError: () => dropped(attempt),
    }).then(() => {
      if (current !== attempt) return;
      made++;
      backoffMs = minBackoffMs;
      setUp(true);
    }, () => dropped(attempt));
  }

  subscribe();
  return {
    up: () => isUp,
    latest: () => latest,
    byHash: (hash) => heads.get(hash),
    subscriptions: () => made,
    wentBack: () => back,
    onHead(listener) {
      headListeners.add(listener);
      return () => headListeners.delete(listener);
    },
    onState(listener) {
      stateListeners.add(listener);
      return () => stateListeners.delete(listener);
    },
    close() {
      closed = true;
      clearTimeout(retry);
      const attempt = current;
      current = undefined;
      attempt?.close();
      setUp(false);
    },
  };
}
