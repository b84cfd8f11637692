import { existsSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { createPublicClient, http, type Hex } from 'viem';

const gunzipAsync = promisify(gunzip);

export interface ChainCheckpointOptions {
  /** The anvil's JSON-RPC URL. */
  url: string;
  /** anvil's state file (`--load-state` at the next start): replaced atomically by each checkpoint. */
  statePath: string;
  /** The least time between two checkpoints. */
  minIntervalMs: number;
  /**
   * The share of time checkpoints may take: after one that took `d`, the next waits at least
   * `d / budget`, so their cost stays this share of the node's time however long its history is.
   */
  budget?: number;
  /**
   * A periodic checkpoint waits until no block has been mined for this long: anvil answers nothing
   * else while it serializes its blocks for a dump (a transaction sent during a 0.9 s dump waited
   * 0.9 s), so a checkpoint taken in a pause costs no transfer its latency. Default 1 s.
   */
  quietMs?: number;
  /** The longest a due checkpoint waits for such a pause (a node never quiet is checkpointed anyway). Default `minIntervalMs`. */
  maxDeferMs?: number;
  onCheckpoint?: (checkpoint: { block: number; bytes: number; ms: number }) => void;
  onError?: (error: unknown) => void;
}

export interface ChainCheckpoints {
  /**
   * Settles once the state file exists: a node that has none is checkpointed at once, before anything
   * is mined, so that a later crash never brings it back with a genesis block newer than what it lost.
   */
  ready: Promise<void>;
  /** Takes a checkpoint now unless the chain has no new block since the last one (`force`: always). */
  checkpoint(force?: boolean): Promise<void>;
  /** Stops the schedule after a last checkpoint (a clean stop loses nothing). */
  stop(): Promise<void>;
}

/**
 * Checkpoints of an anvil we run, instead of anvil's own `--state-interval` (which rewrote the whole
 * chain every second, idle or not, its cost growing with the history: an 81 MB file after 5,451
 * transactions): the state is asked for over JSON-RPC (`anvil_dumpState`), written
 * to a temporary file, fsynced and renamed over the state file, so the file is always one whole
 * checkpoint. Checkpoints are rare (`minIntervalMs`, and at most `budget` of the time), skipped while
 * no block is mined, taken in a pause of the chain's traffic when there is one (`quietMs`), and
 * once more at a clean stop. What a crash of the node loses (the blocks
 * since the last checkpoint) the relayer rebuilds from its journal at the next start
 * (src/chain/rebuild-lost-blocks.ts, called by the relayer's `recover`).
 */
export function startChainCheckpoints(options: ChainCheckpointOptions): ChainCheckpoints {
  const budget = options.budget ?? 0.02;
  const quietMs = options.quietMs ?? 1_000;
  const maxDeferMs = options.maxDeferMs ?? options.minIntervalMs;
  // A long history makes a large dump: time, and no size limit (viem's default, 10 MiB, failed every
  // checkpoint of a chain with some 40,000 settled transfers).
  const client = createPublicClient({ transport: http(options.url, { timeout: 300_000, retryCount: 0, maxResponseBodySize: false }) });
  let lastBlock: bigint | undefined;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function take(force: boolean): Promise<number> {
    const block = await client.getBlockNumber({ cacheTime: 0 });
    if (!force && block === lastBlock) return 0;
    const started = performance.now();
    const dumped = await client.request({ method: 'anvil_dumpState' as never }) as unknown as Hex;
    const json = await gunzipAsync(Buffer.from(dumped.slice(2), 'hex'));
    await writeAtomically(options.statePath, json);
    const ms = performance.now() - started;
    lastBlock = block;
    options.onCheckpoint?.({ block: Number(block), bytes: json.length, ms });
    return ms;
  }

  function run(force: boolean): Promise<number> {
    const result = running.then(() => take(force));
    running = result.then(() => undefined, () => undefined);
    return result;
  }

  /** Resolves once the head has not moved for `quietMs`, or `maxDeferMs` after it was called. */
  async function pause(): Promise<void> {
    const giveUpAt = performance.now() + maxDeferMs;
    let head = await client.getBlockNumber({ cacheTime: 0 });
    let since = performance.now();
    while (!stopped && performance.now() - since < quietMs && performance.now() < giveUpAt) {
      const wait = Math.max(10, Math.min(quietMs / 5, giveUpAt - performance.now()));
      await new Promise((resolve) => setTimeout(resolve, wait).unref());
      const now = await client.getBlockNumber({ cacheTime: 0 });
      if (now !== head) [head, since] = [now, performance.now()];
    }
  }

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void pause().then(() => run(false)).then(
        (ms) => schedule(Math.max(options.minIntervalMs, ms / budget)),
        (error: unknown) => { options.onError?.(error); schedule(options.minIntervalMs); },
      );
    }, delayMs);
    timer.unref();
  }
  schedule(options.minIntervalMs);
  const ready = existsSync(options.statePath) ? Promise.resolve() : run(true).then(() => undefined);

  return {
    ready,
    async checkpoint(force = false) {
      await run(force);
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await run(false).catch((error: unknown) => options.onError?.(error));
    },
  };
}

/**
 * Writes `file` whole or not at all: a temporary file beside it, fsynced, renamed over it, the
 * directory fsynced. On the thread pool: the platform's requests go on meanwhile (written
 * synchronously, a 93 MiB checkpoint held the event loop for 240–310 ms).
 */
async function writeAtomically(file: string, contents: Buffer): Promise<void> {
  const temporary = `${file}.${process.pid}.tmp`;
  const handle = await open(temporary, 'w', 0o600);
  try {
    await handle.writeFile(contents);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, file);
  const dir = await open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
