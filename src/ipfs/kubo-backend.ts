import type { ImportCandidate } from 'kubo-rpc-client';
import { DomainError } from '#shared/errors.ts';
import type { AddEntry, AddOptions, AddResult, CatRange, IpfsBackend, IpfsDirectoryEntry, IpfsObjectStat } from './ipfs-backend.ts';
import { depthFirstCheck } from './kubo-add-order.ts';
import { createKuboRpc, type KuboRpcOptions } from './kubo-rpc.ts';
import { kuboChunkSize } from './unixfs-profile.ts';

export type KuboBackendOptions = KuboRpcOptions;

/** Kubo's `offline` option, which kubo-rpc-client passes through but does not declare. */
const offline = { offline: true };
/** `ls` options (Kubo's, undeclared too): streamed, with each link's type and size. */
const streamedListing = { ...offline, stream: true, resolveType: true, size: true };

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
      // kubo-rpc-client swallows an error of the entries it uploads (it only aborts the request):
      // keep the first one, a refusal of ours or a cut upload, and report it instead of the abort.
      let uploadError: unknown;
      const kept = <T>(source: AsyncIterable<T>): AsyncGenerator<T> =>
        (async function* () {
          try {
            yield* source;
          } catch (error) {
            uploadError ??= error;
            throw error;
          }
        })();
      const order = depthFirstCheck();
      async function* candidates(): AsyncGenerator<ImportCandidate> {
        for await (const entry of all()) {
          order(entry);
          yield entry.kind === 'file' ? { path: entry.path, content: kept(entry.content) } : { path: entry.path };
        }
      }
      let wrapper: string | undefined;
      let last: string | undefined;
      await rpc.call(
        'add',
        async (signal) => {
          const added = rpc.client.addAll(kept(candidates()), {
            cidVersion: addOptions.cidVersion,
            rawLeaves: addOptions.rawLeaves,
            chunker: `size-${kuboChunkSize}`,
            hashAlg: 'sha2-256',
            wrapWithDirectory: !unnamed,
            onlyHash: addOptions.onlyHash,
            // Pinned below, once we know which CID is the result.
            pin: false,
            signal,
          });
          for await (const { path: name, cid } of added) {
            last = cid.toString();
            if (name === '') wrapper = last;
            else if (!name.includes('/') && topLevel.has(name)) topLevel.set(name, last);
          }
        },
        { noTimeout: true },
      ).catch((error: unknown) => {
        // Kubo may answer before our upload ends; a failed upload then ends the answer early.
        throw uploadError ?? error;
      });
      if (uploadError) throw uploadError;
      // Kubo lists the wrapper last: without it the add did not finish (the client drops error lines).
      const finished = unnamed ? last : wrapper;
      const root = unnamed ? last : !addOptions.wrapWithDirectory && topLevel.size === 1 ? [...topLevel.values()][0] : wrapper;
      if (!finished || !root) throw new DomainError('internal', 'IPFS add ended without a root CID');
      if (addOptions.pin && !addOptions.onlyHash) await rpc.call('pin/add', (signal) => rpc.client.pin.add(root, { recursive: true, signal }), { noTimeout: true });
      return { cid: root };
    },

    async stat(cid, path): Promise<IpfsObjectStat> {
      const stat = await rpc.call('files/stat', (signal) => rpc.client.files.stat(ipfsPath(cid, path), { ...offline, signal }));
      const type = stat.type === 'directory' ? 'directory' : 'file';
      return { cid: stat.cid.toString(), type, size: type === 'directory' ? 0 : Number(stat.size) };
    },

    async *ls(cid, path): AsyncGenerator<IpfsDirectoryEntry> {
      const stat = await this.stat(cid, path);
      if (stat.type !== 'directory') throw new DomainError('request.invalid', `${cid}${path ? `/${path}` : ''} is not a directory`);
      const links = rpc.stream('ls', (signal) => rpc.client.ls(ipfsPath(cid, path), { ...streamedListing, signal }));
      for await (const link of links) {
        // kubo-rpc-client answers an empty directory with the directory itself (no name): skip it.
        if (link.name === undefined) continue;
        const type = link.type === 'dir' ? 'directory' : 'file';
        yield { name: link.name, cid: link.cid.toString(), type, size: type === 'directory' ? 0 : Number(link.size) };
      }
    },

    async *cat(cid, path, range: CatRange = {}): AsyncGenerator<Uint8Array> {
      if (range.length === 0) {
        await this.stat(cid, path);
        return;
      }
      yield* rpc.stream('cat', (signal) => rpc.client.cat(ipfsPath(cid, path), { ...offline, offset: range.offset, length: range.length, signal }));
    },

    id: async () => (await rpc.call('id', (signal) => rpc.client.id({ signal }))).id.toString(),
    version: async () => (await rpc.call('version', (signal) => rpc.client.version({ signal }))).version,
    close: async () => undefined,
  };
}
