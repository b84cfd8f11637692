import { createWriteStream, existsSync } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { createPublicClient, http } from 'viem';

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
 * (src/chain/anvil-rebuild-lost-blocks.ts, called by the relayer's `recover`).
 */
export function startChainCheckpoints(options: ChainCheckpointOptions): ChainCheckpoints {
  const budget = options.budget ?? 0.02;
  const quietMs = options.quietMs ?? 1_000;
  const maxDeferMs = options.maxDeferMs ?? options.minIntervalMs;
  const client = createPublicClient({ transport: http(options.url, { retryCount: 0 }) });
  let lastBlock: bigint | undefined;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;

  async function take(force: boolean): Promise<number> {
    const block = await client.getBlockNumber({ cacheTime: 0 });
    if (!force && block === lastBlock) return 0;
    const started = performance.now();
    const bytes = await writeAtomically(options.statePath, (temporary) => dumpState(options.url, temporary));
    const ms = performance.now() - started;
    lastBlock = block;
    options.onCheckpoint?.({ block: Number(block), bytes, ms });
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
      // A stop meanwhile took the last checkpoint itself.
      void pause().then(() => (stopped ? 0 : run(false))).then(
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
 * anvil's state (`anvil_dumpState`: gzip, as a hex string in the JSON-RPC answer) into `file`, as a
 * stream: hex decoded, gunzipped and written chunk by chunk. A long history makes a large dump
 * (246 MiB after 48,500 settled transfers); held whole it took the platform's memory up by four
 * times its size and its event loop for a quarter of a second per 100 MiB (JSON, hex, the write).
 */
async function dumpState(url: string, file: string): Promise<void> {
  const response = await fetch(url, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_dumpState', params: [] }),
  });
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new Error(`anvil_dumpState: HTTP ${response.status}`);
  }
  await pipeline(Readable.fromWeb(response.body), hexResult(), createGunzip(), createWriteStream(file, { mode: 0o600, flush: true }));
}

/**
 * The bytes of a JSON-RPC answer's hex string `result` (`{"jsonrpc":"2.0","id":1,"result":"0x…"}`),
 * decoded as they arrive; an answer without one (a JSON-RPC error) fails with what it says.
 */
function hexResult(): Transform {
  const start = /"result"\s*:\s*"0x/;
  let head = '';
  let state: 'head' | 'hex' | 'done' = 'head';
  let odd = '';
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      let text = chunk.toString('latin1');
      if (state === 'head') {
        head += text;
        const found = start.exec(head);
        if (!found) {
          if (head.length > 65_536) callback(new Error(`anvil_dumpState answered without a result: ${head.slice(0, 200)}`));
          else callback();
          return;
        }
        text = head.slice(found.index + found[0].length);
        head = '';
        state = 'hex';
      }
      if (state === 'hex') {
        const end = text.indexOf('"');
        const digits = odd + (end < 0 ? text : text.slice(0, end));
        if (end >= 0) state = 'done';
        odd = digits.length % 2 === 1 ? digits.slice(-1) : '';
        const even = odd ? digits.slice(0, -1) : digits;
        const bytes = Buffer.from(even, 'hex');
        // Buffer.from stops at the first character that is not hex.
        if (bytes.length * 2 !== even.length) {
          callback(new Error('anvil_dumpState answered a result that is not hex'));
          return;
        }
        this.push(bytes);
      }
      callback();
    },
    flush(callback: TransformCallback) {
      if (state === 'done' && !odd) callback();
      else if (state === 'head') callback(new Error(`anvil_dumpState answered without a result: ${head.slice(0, 200)}`));
      else callback(new Error('anvil_dumpState answer ended inside its result'));
    },
  });
}

/**
 * Makes `file` whole or not at all: `write` fills a temporary file beside it (fsynced before it is
 * closed), which is renamed over it, then the directory is fsynced; a failed write leaves `file` as
 * it was and no temporary file. Answers the file's size.
 */
async function writeAtomically(file: string, write: (temporary: string) => Promise<void>): Promise<number> {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    await write(temporary);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const { size } = await stat(temporary);
  await rename(temporary, file);
  const dir = await open(path.dirname(file), 'r');
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
  return size;
}
