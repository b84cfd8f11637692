import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { FsBlockstore } from 'blockstore-fs';
import { exporter, type ReadableStorage, type UnixFSEntry } from 'ipfs-unixfs-exporter';
import type { WritableStorage } from 'ipfs-unixfs-importer';
import { DomainError } from '#shared/errors.ts';
import { importEntries } from './embedded-add.ts';
import { loadOrCreatePeerId } from './embedded-identity.ts';
import type { CatRange, IpfsBackend, IpfsDirectoryEntry, IpfsObjectStat, IpfsObjectType } from './ipfs-backend.ts';

export interface EmbeddedBackendOptions {
  /** DATA_DIR: blocks go to `<dataDir>/ipfs/blocks`, pinned roots to `<dataDir>/ipfs/pins`, the key to `<dataDir>/ipfs/identity.pem`. */
  dataDir: string;
  /** Reported by `version()`. */
  version?: string;
}

export const embeddedBackendVersion = 'vixpay-embedded-ipfs/1 (ipfs-unixfs-importer 17, blockstore-fs 4)';

/**
 * The embedded IPFS backend: ipfs-unixfs-importer/-exporter over a filesystem blockstore, with no
 * networking at all (no libp2p, no DHT, no bitswap), so content this node does not hold is a
 * quick `request.not_found`. It never collects garbage: every block written stays; `pin` only
 * records the root (an empty file named by the CID under `ipfs/pins`).
 *
 * @example
 * const ipfs = await createEmbeddedBackend({ dataDir: config.dataDir });
 */
export async function createEmbeddedBackend(options: EmbeddedBackendOptions): Promise<IpfsBackend> {
  const root = path.join(options.dataDir, 'ipfs');
  const pinsDir = path.join(root, 'pins');
  // Blocks are users' files: directories 0700, files 0600 (blockstore-fs follows the umask 077 set at start).
  await mkdir(pinsDir, { recursive: true, mode: 0o700 });
  const blockstore = new FsBlockstore(path.join(root, 'blocks'));
  await blockstore.open();
  const peerId = await loadOrCreatePeerId(path.join(root, 'identity.pem'));
  return createUnixfsBackend({
    blocks: blockstore,
    writer: writeOnce(blockstore),
    pin: (cid) => writeFile(path.join(pinsDir, cid), '', { mode: 0o600 }),
    peerId,
    version: options.version ?? embeddedBackendVersion,
    close: () => blockstore.close(),
  });
}

/** What a unixfs backend runs on: where blocks are read and written, where pins are recorded. */
export interface UnixfsBackendParts {
  blocks: ReadableStorage;
  writer: WritableStorage;
  /** Records `cid` as pinned; called only once its add has written every block. */
  pin(cid: string): Promise<unknown>;
  peerId: string;
  version: string;
  close(): Promise<void>;
}

/**
 * The IpfsBackend of ipfs-unixfs-importer/-exporter over any blockstore: the embedded one
 * (blockstore-fs) and the fleet's (PostgreSQL, postgres-backend.ts) share every line of it, so
 * they give the same CIDs and the same answers.
 */
export function createUnixfsBackend(parts: UnixfsBackendParts): IpfsBackend {
  const { blocks } = parts;

  async function resolve(cid: string, subPath: string | undefined): Promise<UnixFSEntry> {
    try {
      return await exporter(subPath ? `${cid}/${subPath}` : cid, blocks);
    } catch (error) {
      throw readError(error, subPath ? `${cid}/${subPath}` : cid);
    }
  }

  return {
    async addEntries(entries, addOptions) {
      const result = await importEntries(entries, addOptions, parts.writer);
      if (addOptions.pin && !addOptions.onlyHash) await parts.pin(result.cid);
      return result;
    },

    async stat(cid, subPath): Promise<IpfsObjectStat> {
      const entry = await resolve(cid, subPath);
      return { cid: entry.cid.toString(), type: objectType(entry), size: entry.type === 'directory' ? 0 : Number(entry.size) };
    },

    async *ls(cid, subPath): AsyncGenerator<IpfsDirectoryEntry> {
      const entry = await resolve(cid, subPath);
      if (entry.type !== 'directory') throw new DomainError('request.invalid', `${subPath ? `${cid}/${subPath}` : cid} is not a directory`);
      try {
        for await (const child of entry.entries()) {
          const resolved = await resolve(child.cid.toString(), undefined);
          const type = objectType(resolved);
          yield { name: child.name, cid: child.cid.toString(), type, size: type === 'directory' ? 0 : Number(resolved.size) };
        }
      } catch (error) {
        throw readError(error, cid);
      }
    },

    async *cat(cid, subPath, range: CatRange = {}): AsyncGenerator<Uint8Array> {
      const entry = await resolve(cid, subPath);
      if (entry.type === 'directory') throw new DomainError('request.invalid', `${subPath ? `${cid}/${subPath}` : cid} is a directory`);
      if (entry.type === 'object') throw notUnixFs(cid);
      if (range.length === 0) return;
      try {
        yield* inWindows(entry, range);
      } catch (error) {
        throw readError(error, cid);
      }
    },

    id: async () => parts.peerId,
    version: async () => parts.version,
    close: () => parts.close(),
  };
}

/**
 * Writes each block once. blockstore-fs writes through a temp file and a rename; two writes of
 * the same block at once (a file of repeated chunks, e.g. zero padding) collide on the temp file
 * and the loser retries for a second. Here a block already stored is not written again, and a
 * block being written is awaited rather than written twice. Blocks are content-addressed, and a
 * stored block file is complete (renamed into place), so skipping is safe.
 */
function writeOnce(store: FsBlockstore): WritableStorage {
  const inFlight = new Map<string, Promise<unknown>>();
  return {
    async put(cid, bytes, options) {
      const key = Buffer.from(cid.multihash.bytes).toString('base64');
      const pending = inFlight.get(key);
      if (pending) {
        await pending;
        return cid;
      }
      const write = (async () => ((await store.has(cid)) ? cid : store.put(cid, bytes, options)))();
      inFlight.set(key, write);
      try {
        await write;
        return cid;
      } finally {
        inFlight.delete(key);
      }
    },
  };
}

/** Bytes of file content the exporter is asked for at a time (16 leaves of Kubo's chunk size). */
const readWindowBytes = 4 * 1024 * 1024;

/**
 * The exporter walks a file's DAG as fast as the blockstore answers, into a queue without
 * backpressure: a whole-file read to a slow client would hold the rest of the file in memory. Asked
 * for one window at a time, it holds at most a window ahead of the reader (the nodes above the
 * leaves are read again per window: a few KiB each, and cached by the PostgreSQL blockstore).
 */
async function* inWindows(entry: Extract<UnixFSEntry, { content: unknown }>, range: CatRange): AsyncGenerator<Uint8Array> {
  const size = Number(entry.size);
  const start = range.offset ?? 0;
  const end = range.length === undefined ? size : Math.min(size, start + range.length);
  // Out of range, or nothing to read: the exporter's own answer (an error, or no bytes).
  if (!(start >= 0 && start < end)) {
    yield* entry.content({ offset: range.offset, length: range.length });
    return;
  }
  for (let at = start; at < end; at += readWindowBytes) {
    yield* entry.content({ offset: at, length: Math.min(readWindowBytes, end - at) });
  }
}

function objectType(entry: UnixFSEntry): IpfsObjectType {
  if (entry.type === 'directory') return 'directory';
  if (entry.type === 'object') throw notUnixFs(entry.cid.toString());
  return 'file';
}

function notUnixFs(cid: string): DomainError {
  return new DomainError('request.invalid', `${cid} is not UnixFS content`);
}

/** Exporter and blockstore errors as domain errors; anything unexpected stays a 500. */
function readError(error: unknown, where: string): unknown {
  if (error instanceof DomainError) return error;
  const name = (error as { name?: string } | undefined)?.name;
  if (name === 'NotFoundError') return new DomainError('request.not_found', `${where} is not on this node`, { cause: error });
  if (name === 'BadPathError' || name === 'NoPropError') return new DomainError('request.not_found', `no such path: ${where}`, { cause: error });
  if (name === 'NotUnixFSError' || name === 'NoResolverError') return new DomainError('request.invalid', `${where} is not UnixFS content`, { cause: error });
  if (name === 'InvalidParametersError' || name === 'OverReadError') return new DomainError('request.invalid', `cannot read ${where}: ${(error as Error).message}`, { cause: error });
  return error;
}
