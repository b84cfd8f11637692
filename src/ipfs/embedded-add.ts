import { importer, type ImportCandidate, type WritableStorage } from 'ipfs-unixfs-importer';
import { CID } from 'multiformats/cid';
import { sha256 } from 'multiformats/hashes/sha2';
import { DomainError } from '#shared/errors.ts';
import type { AddEntry, AddOptions, AddResult } from './ipfs-backend.ts';
import { kuboImporterOptions } from './unixfs-profile.ts';

/** `only-hash`: blocks are hashed and dropped. */
const discardingStore: WritableStorage = { put: async (cid) => cid };

/**
 * `addEntries` of the embedded backend: one streaming pass of ipfs-unixfs-importer with Kubo's
 * profile. Named entries are always imported inside a wrapping directory; the result is the one
 * top-level entry's CID, or the wrapper's when there are several or `-w` was asked for (a
 * directory's CID depends only on its contents, so wrapping changes no inner CID). An unnamed
 * file (path `''`) must be the only entry; its own CID is the result.
 */
export async function importEntries(
  entries: AsyncIterable<AddEntry>,
  options: AddOptions,
  blockstore: WritableStorage,
): Promise<AddResult> {
  const iterator = entries[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw new DomainError('request.invalid', 'nothing to add: no file or directory part');
  const unnamed = first.value.kind === 'file' && first.value.path === '';
  if (unnamed && options.wrapWithDirectory) {
    throw new DomainError('request.invalid', 'wrap-with-directory needs a file name on the part');
  }

  // Top-level name → its CID once the importer yields it. The importer does not yield an
  // explicit directory that stays empty (it links it into its parent as is), hence the fallback.
  const topLevel = new Map<string, string | undefined>();
  async function* candidates(): AsyncGenerator<ImportCandidate> {
    let entry: AddEntry = first.value as AddEntry;
    for (;;) {
      if (!unnamed) topLevel.set(entry.path.split('/', 1)[0] ?? '', undefined);
      yield toCandidate(entry);
      const next = await iterator.next();
      if (next.done) return;
      if (unnamed || (next.value.kind === 'file' && next.value.path === '')) {
        throw new DomainError('request.invalid', 'a part without a file name must be the only part');
      }
      entry = next.value;
    }
  }

  const store = options.onlyHash ? discardingStore : blockstore;
  const importOptions = { ...kuboImporterOptions(options), wrapWithDirectory: !unnamed };
  let single: string | undefined;
  let wrapper: string | undefined;
  try {
    for await (const result of importer(candidates(), store, importOptions)) {
      const resultPath = result.path ?? '';
      if (unnamed) single = result.cid.toString();
      else if (resultPath === '') wrapper = result.cid.toString();
      else if (!resultPath.includes('/')) topLevel.set(resultPath, result.cid.toString());
    }
  } finally {
    // An importer that failed early leaves the request's parts unread; close our side.
    await iterator.return?.();
  }
  const root = unnamed ? single : !options.wrapWithDirectory && topLevel.size === 1 ? await onlyEntryCid(topLevel, options.cidVersion) : wrapper;
  if (!root) throw new DomainError('internal', 'the importer produced no root');
  return { cid: root };
}

async function onlyEntryCid(topLevel: Map<string, string | undefined>, cidVersion: 0 | 1): Promise<string> {
  const [cid] = topLevel.values();
  return cid ?? (await emptyDirectoryCid(cidVersion));
}

/** dag-pb `{ Data: UnixFS { Type: Directory } }`, the node of every empty directory. */
const emptyDirectoryNode = Uint8Array.of(0x0a, 0x02, 0x08, 0x01);
const dagPbCode = 0x70;

async function emptyDirectoryCid(cidVersion: 0 | 1): Promise<string> {
  const digest = await sha256.digest(emptyDirectoryNode);
  return (cidVersion === 0 ? CID.createV0(digest) : CID.createV1(dagPbCode, digest)).toString();
}

function toCandidate(entry: AddEntry): ImportCandidate {
  if (entry.kind === 'directory') return { path: entry.path };
  return entry.path === '' ? { content: entry.content } : { path: entry.path, content: entry.content };
}
