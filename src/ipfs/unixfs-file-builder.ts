import type { ImporterOptions, InProgressImportResult, WritableStorage } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';

type FileBuilder = NonNullable<ImporterOptions['fileBuilder']>;
type FileBuilderOptions = Parameters<FileBuilder>[2];

const dagPbCode = 0x70;
const rawCode = 0x55;

/** A built node or leaf, with the number of file bytes under it (what its parent records). */
type Built = InProgressImportResult & { fileBytes?: bigint };

/**
 * ipfs-unixfs-importer's file builder (leaves → balanced tree → root), rewritten for two reasons:
 *
 * 1. Correctness: the library encodes a parent node's `filesize`/`blocksizes` with
 *    protons-runtime, whose 64-bit varint writer mis-encodes values in [2^31, 2^32) (its
 *    `LongBits` keeps the low word signed, so one byte is written into a five-byte slot and the
 *    rest is whatever the buffer pool held). Files of 2–4 GiB, or any subtree of that size, got
 *    corrupt, even random, root blocks. Parents are encoded here (`encodeFileNode`).
 * 2. Memory: a `file` leaf reached its parent still holding its 256 KiB of data; 174 of them
 *    waited for each parent. Here only the leaf's CID and sizes are kept once it is written.
 *
 * The nodes are byte for byte what the library (and Kubo) write for sizes below 2^31: dag-pb with
 * the links first (`Hash`, `Name: ""`, `Tsize`), then UnixFS `Data { Type: File, filesize,
 * blocksizes… }`. Leaves still come from the importer's `bufferImporter`, unchanged.
 */
export const kuboFileBuilder: FileBuilder = async (file, blockstore, options) => {
  return options.layout(leaves(file, blockstore, options), (children) => reduce(children as Built[], blockstore, options, file.path));
};

async function* leaves(file: Parameters<FileBuilder>[0], blockstore: WritableStorage, options: FileBuilderOptions): AsyncGenerator<Built> {
  let first: Built | undefined;
  let count = 0;
  for await (const leaf of inOrder(options.bufferImporter(file, blockstore), options.blockWriteConcurrency)) {
    const built: Built = { cid: leaf.cid, size: leaf.size, unixfs: leaf.unixfs, fileBytes: leafFileBytes(leaf) };
    if (++count === 1) {
      // Kept whole: if it is the only leaf, it becomes the file itself.
      first = { ...built, block: leaf.block, single: true } as Built;
      continue;
    }
    if (first) {
      yield withoutData(first);
      first = undefined;
    }
    yield withoutData(built);
  }
  if (first) yield first;
}

function leafFileBytes(leaf: InProgressImportResult): bigint {
  if (leaf.cid.code === rawCode) return leaf.size;
  return leaf.unixfs ? leaf.unixfs.fileSize() : 0n;
}

function withoutData(leaf: Built): Built {
  return { cid: leaf.cid, size: leaf.size, fileBytes: leaf.fileBytes };
}

async function reduce(children: Built[], blockstore: WritableStorage, options: FileBuilderOptions, path: string | undefined): Promise<Built> {
  const only = children[0];
  if (children.length === 1 && only && 'single' in only && only.single && options.reduceSingleLeafToSelf) {
    return { cid: only.cid, path, unixfs: only.unixfs, size: only.size, fileBytes: only.fileBytes };
  }
  // As the library does: children holding no file bytes are left out.
  const kept = children.filter((child) => (child.fileBytes ?? 0n) > 0n);
  const block = encodeFileNode(kept.map((child) => ({ cid: child.cid, tsize: child.size, fileBytes: child.fileBytes ?? 0n })));
  const digest = await sha256.digest(block);
  const cid = CID.create(options.cidVersion, dagPbCode, digest);
  await blockstore.put(cid, block, { signal: options.signal });
  const size = kept.reduce((sum, child) => sum + child.size, BigInt(block.length));
  const fileBytes = kept.reduce((sum, child) => sum + (child.fileBytes ?? 0n), 0n);
  return { cid, path, size, fileBytes };
}

/** dag-pb `{ Links: [{Hash, Name: "", Tsize}…], Data: UnixFS { Type: File, filesize, blocksizes } }`. */
export function encodeFileNode(links: Array<{ cid: CID; tsize: bigint; fileBytes: bigint }>): Uint8Array {
  const parts: number[][] = [];
  let fileSize = 0n;
  const data: number[] = [0x08, 0x02];
  for (const link of links) {
    const hash = link.cid.bytes;
    const body = [0x0a, ...varint(BigInt(hash.length)), ...hash, 0x12, 0x00, 0x18, ...varint(link.tsize)];
    parts.push([0x12, ...varint(BigInt(body.length)), ...body]);
    fileSize += link.fileBytes;
  }
  data.push(0x18, ...varint(fileSize));
  for (const link of links) data.push(0x20, ...varint(link.fileBytes));
  parts.push([0x0a, ...varint(BigInt(data.length)), ...data]);
  return Uint8Array.from(parts.flat());
}

/** Unsigned LEB128, exact for any size. */
export function varint(value: bigint): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80n) {
    bytes.push(Number(rest & 0x7fn) | 0x80);
    rest >>= 7n;
  }
  bytes.push(Number(rest));
  return bytes;
}

/**
 * Runs the leaf writers `concurrency` at a time and yields their results in order (the
 * library's it-parallel-batch, as a window rather than batches).
 */
async function* inOrder<T>(source: AsyncIterable<() => Promise<T>>, concurrency: number): AsyncGenerator<T> {
  const pending: Array<Promise<T>> = [];
  try {
    for await (const task of source) {
      const promise = task();
      promise.catch(() => undefined); // awaited below; this only keeps a later failure from going unhandled
      pending.push(promise);
      if (pending.length >= concurrency) yield await (pending.shift() as Promise<T>);
    }
    while (pending.length > 0) yield await (pending.shift() as Promise<T>);
  } finally {
    pending.length = 0;
  }
}
