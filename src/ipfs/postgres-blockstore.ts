import type { Blockstore, InputPair, Pair } from 'interface-blockstore';
import { NotFoundError } from 'interface-store';
import type { CID } from 'multiformats/cid';
import type { Db } from '../store/db.ts';

interface AbortOptions { signal?: AbortSignal }

/** The Blockstore calls the unixfs importer (`put`) and exporter (`get`) make, and their batch forms. */
export type FleetBlockstore = Pick<Blockstore, 'has' | 'put' | 'get' | 'putMany' | 'getMany'>;

export interface PostgresBlockstoreOptions {
  /** Bytes of blocks kept in memory, most recently used first (default 16 MiB). */
  cacheBytes?: number;
  /** Queries on the store at once, at most (default 4): a 300 MiB cat must not take every pooled connection. */
  concurrency?: number;
  clock?: () => number;
}

/**
 * An `interface-blockstore` Blockstore in the fleet's database (table `ipfs_blocks`, migration
 * 0025), so that every instance on it reads the blocks any of them wrote. A block is keyed by its
 * multihash, as blockstore-fs keys its files, and written once: `INSERT … ON CONFLICT DO NOTHING`
 * (content-addressed bytes never change, and two instances adding the same file at once both
 * succeed). Each `put` is its own statement, committed before it resolves; the importer writes a
 * node only after every block it links to has resolved, so a block in the table always has its
 * whole DAG below it.
 *
 * Reads keep a bounded LRU of blocks (directory and file nodes are read again on every `stat`,
 * `ls` and range). A missing block is interface-store's `NotFoundError` (what blockstore-fs throws,
 * answered `request.not_found`); a database that does not answer is the store's own
 * `store.unavailable`, as every other query of the platform.
 */
export class PostgresBlockstore implements FleetBlockstore {
  readonly #db: Db;
  readonly #cache: ByteBoundedCache;
  readonly #slots: Slots;
  readonly #clock: () => number;

  constructor(db: Db, options: PostgresBlockstoreOptions = {}) {
    this.#db = db;
    this.#cache = new ByteBoundedCache(options.cacheBytes ?? 16 * 1024 * 1024);
    this.#slots = new Slots(options.concurrency ?? 4);
    this.#clock = options.clock ?? Date.now;
  }

  async has(cid: CID, options?: AbortOptions): Promise<boolean> {
    const key = keyOf(cid);
    if (this.#cache.get(key)) return true;
    const row = await this.#slots.run(options, () => this.#db.selectFrom('ipfs_blocks').select('multihash').where('multihash', '=', key).executeTakeFirst());
    return row !== undefined;
  }

  async put(cid: CID, bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>, options?: AbortOptions): Promise<CID> {
    const key = keyOf(cid);
    const block = await whole(bytes);
    if (this.#cache.get(key)) return cid; // written by this instance already (a file of repeated chunks)
    await this.#slots.run(options, () => this.#db.insertInto('ipfs_blocks')
      .values({ multihash: key, bytes: asBuffer(block), created_at: this.#clock() })
      .onConflict((conflict) => conflict.column('multihash').doNothing())
      .execute());
    this.#cache.set(key, block);
    return cid;
  }

  async *putMany(source: Iterable<InputPair> | AsyncIterable<InputPair>, options?: AbortOptions): AsyncGenerator<CID> {
    for await (const { cid, bytes } of source) yield await this.put(cid, bytes, options);
  }

  async *get(cid: CID, options?: AbortOptions): AsyncGenerator<Uint8Array> {
    yield await this.#block(cid, options);
  }

  async *getMany(source: Iterable<CID> | AsyncIterable<CID>, options?: AbortOptions): AsyncGenerator<Pair> {
    for await (const cid of source) {
      const block = await this.#block(cid, options);
      yield { cid, bytes: (function* () { yield block; })() };
    }
  }

  async #block(cid: CID, options: AbortOptions | undefined): Promise<Uint8Array> {
    const key = keyOf(cid);
    const cached = this.#cache.get(key);
    if (cached) return cached;
    const row = await this.#slots.run(options, () => this.#db.selectFrom('ipfs_blocks').select('bytes').where('multihash', '=', key).executeTakeFirst());
    if (!row) throw new NotFoundError(`block ${cid.toString()} is not in the fleet's store`);
    const block = new Uint8Array(row.bytes.buffer, row.bytes.byteOffset, row.bytes.byteLength);
    this.#cache.set(key, block);
    return block;
  }
}

function keyOf(cid: CID): Buffer {
  return Buffer.from(cid.multihash.bytes);
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

async function whole(bytes: Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  if (bytes instanceof Uint8Array) return bytes;
  const chunks: Uint8Array[] = [];
  for await (const chunk of bytes) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Least recently used blocks dropped first once their bytes pass `limit`; a block over the limit is not kept. */
class ByteBoundedCache {
  readonly #limit: number;
  readonly #blocks = new Map<string, Uint8Array>();
  #bytes = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: Buffer): Uint8Array | undefined {
    const name = key.toString('base64');
    const block = this.#blocks.get(name);
    if (block) {
      this.#blocks.delete(name);
      this.#blocks.set(name, block);
    }
    return block;
  }

  set(key: Buffer, block: Uint8Array): void {
    const name = key.toString('base64');
    if (block.byteLength > this.#limit || this.#blocks.has(name)) return;
    this.#blocks.set(name, block);
    this.#bytes += block.byteLength;
    for (const [oldest, value] of this.#blocks) {
      if (this.#bytes <= this.#limit) break;
      this.#blocks.delete(oldest);
      this.#bytes -= value.byteLength;
    }
  }
}

/** At most `size` tasks at once, the others waiting their turn in order. */
class Slots {
  #free: number;
  readonly #waiting: Array<() => void> = [];

  constructor(size: number) {
    this.#free = size;
  }

  async run<T>(options: AbortOptions | undefined, task: () => Promise<T>): Promise<T> {
    options?.signal?.throwIfAborted();
    if (this.#free > 0) this.#free -= 1;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      options?.signal?.throwIfAborted();
      return await task();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free += 1;
    }
  }
}
