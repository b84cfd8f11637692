import { Readable } from 'node:stream';
import { DomainError } from '../shared/errors.ts';
import type { AddEntry, AddOptions, AddResult, CatRange, IpfsBackend, IpfsDirectoryEntry, IpfsObjectStat } from './ipfs-backend.ts';
import { kuboAddBody } from './kubo-multipart.ts';
import { createKuboRpc, kuboMessageError, ndjson, requestBodyError, type KuboRpcOptions } from './kubo-rpc.ts';
import { kuboChunkSize } from './unixfs-profile.ts';

export type KuboBackendOptions = KuboRpcOptions;

interface AddLine { Name?: string; Hash?: string; Message?: string; Type?: string }
interface LsLink { Name: string; Hash: string; Size: number; Type: number }
interface FilesStat { Hash: string; Size: number; Type: string }

/** UnixFS `Data.Type` values Kubo reports in `ls`: Directory and HAMTShard are directories. */
const directoryTypes = new Set([1, 5]);

/**
 * The IPFS backend over a Kubo node's RPC API (IPFS_API_URL). Adds pass Kubo's profile
 * explicitly (cid-version, raw-leaves, chunker, hash), so the node's own Import settings do not
 * change our CIDs unless they change the file-links or HAMT limits. Reads run with Kubo's
 * `offline` option: content the node does not hold is `request.not_found` at once instead of a
 * network search.
 *
 * @example
 * const ipfs = createKuboBackend({ apiUrl: 'http://127.0.0.1:5001' });
 */
export function createKuboBackend(options: KuboBackendOptions): IpfsBackend {
  const rpc = createKuboRpc(options);
  const ipfsPath = (cid: string, path?: string) => (path ? `/ipfs/${cid}/${path}` : `/ipfs/${cid}`);

  return {
    async addEntries(entries: AsyncIterable<AddEntry>, addOptions: AddOptions): Promise<AddResult> {
      const iterator = entries[Symbol.asyncIterator]();
      const first = await iterator.next();
      if (first.done) throw new DomainError('request.invalid', 'nothing to add: no file or directory part');
      const unnamed = first.value.kind === 'file' && first.value.path === '';
      if (unnamed && addOptions.wrapWithDirectory) throw new DomainError('request.invalid', 'wrap-with-directory needs a file name on the part');
      const topLevel = new Map<string, string | undefined>();
      async function* all(): AsyncGenerator<AddEntry> {
        let entry = first.value as AddEntry;
        for (;;) {
          topLevel.set(entry.path.split('/', 1)[0] ?? '', undefined);
          yield entry;
          const next = await iterator.next();
          if (next.done) return;
          if (unnamed || (next.value.kind === 'file' && next.value.path === '')) {
            throw new DomainError('request.invalid', 'a part without a file name must be the only part');
          }
          entry = next.value;
        }
      }
      const { contentType, body } = kuboAddBody(all());
      const response = await rpc.call(
        'add',
        {
          'cid-version': addOptions.cidVersion,
          'raw-leaves': addOptions.rawLeaves,
          chunker: `size-${kuboChunkSize}`,
          hash: 'sha2-256',
          'wrap-with-directory': !unnamed,
          'only-hash': addOptions.onlyHash,
          // Pinned below, once we know which CID is the result.
          pin: false,
          progress: false,
          'stream-channels': true,
        },
        { body: Readable.toWeb(Readable.from(body)) as ReadableStream<Uint8Array>, headers: { 'content-type': contentType }, duplex: 'half', noTimeout: true } as RequestInit,
      );
      let last: string | undefined;
      let wrapper: string | undefined;
      try {
        for await (const line of ndjson<AddLine>(response)) {
          if (line.Type === 'error') throw kuboMessageError('add', line.Message ?? 'failed');
          if (!line.Hash) continue;
          const name = line.Name ?? '';
          last = line.Hash;
          if (name === '') wrapper = line.Hash;
          else if (!name.includes('/') && topLevel.has(name)) topLevel.set(name, line.Hash);
        }
      } catch (error) {
        // Kubo may answer before our upload ends; a failed upload then ends the answer early.
        throw requestBodyError(error) ?? error;
      }
      const root = unnamed ? last : !addOptions.wrapWithDirectory && topLevel.size === 1 ? [...topLevel.values()][0] : (wrapper ?? last);
      if (!root) throw new DomainError('internal', 'IPFS add ended without a root CID');
      if (addOptions.pin && !addOptions.onlyHash) await rpc.call('pin/add', { arg: root, recursive: true }, { noTimeout: true });
      return { cid: root };
    },

    async stat(cid, path): Promise<IpfsObjectStat> {
      const stat = await rpc.json<FilesStat>('files/stat', { arg: ipfsPath(cid, path), offline: true });
      const type = stat.Type === 'directory' ? 'directory' : 'file';
      return { cid: stat.Hash, type, size: type === 'directory' ? 0 : stat.Size };
    },

    async *ls(cid, path): AsyncGenerator<IpfsDirectoryEntry> {
      const stat = await this.stat(cid, path);
      if (stat.type !== 'directory') throw new DomainError('request.invalid', `${cid}${path ? `/${path}` : ''} is not a directory`);
      const response = await rpc.call('ls', { arg: ipfsPath(cid, path), offline: true, stream: true, 'resolve-type': true, size: true });
      // Streamed, Kubo sends `{Objects: [{Hash, Links: [...]}]}` lines, a few links each.
      for await (const line of ndjson<{ Objects?: Array<{ Links?: LsLink[] }>; Message?: string; Type?: string }>(response)) {
        if (line.Type === 'error') throw kuboMessageError('ls', line.Message ?? 'failed');
        for (const link of (line.Objects ?? []).flatMap((object) => object.Links ?? [])) {
          const type = directoryTypes.has(link.Type) ? 'directory' : 'file';
          yield { name: link.Name, cid: link.Hash, type, size: type === 'directory' ? 0 : link.Size };
        }
      }
    },

    async *cat(cid, path, range: CatRange = {}): AsyncGenerator<Uint8Array> {
      if (range.length === 0) {
        await this.stat(cid, path);
        return;
      }
      const response = await rpc.call('cat', { arg: ipfsPath(cid, path), offset: range.offset, length: range.length, offline: true });
      if (!response.body) return;
      for await (const chunk of response.body) yield chunk;
    },

    id: async () => (await rpc.json<{ ID: string }>('id', {})).ID,
    version: async () => (await rpc.json<{ Version: string }>('version', {})).Version,
    close: async () => undefined,
  };
}
