/**
 * The IPFS port: the few operations the private IPFS API needs, implemented by the embedded
 * backend (`embedded-backend.ts`, blocks in DATA_DIR, no networking) and by the Kubo adapter
 * (`kubo-backend.ts`, Kubo RPC at IPFS_API_URL). Both must produce the CIDs Kubo's `ipfs add`
 * produces with its defaults (see `unixfs-profile.ts`); `test/support/ipfs-backend-contract.ts` checks it.
 *
 * CIDs cross this port as strings already checked by `parseContentId` (content-id.ts); sub
 * paths as strings already checked by `normalizeEntryPath` (entry-path.ts).
 */

/** One part of an add: a file (streamed, never buffered whole) or a directory. */
export type AddEntry =
  | {
      kind: 'file';
      /**
       * Slash-separated path inside the added tree, e.g. `folderName/file.txt`; `''` only for a
       * single unnamed file (a part without a file name), whose own CID is then the result.
       */
      path: string;
      content: AsyncIterable<Uint8Array>;
    }
  | { kind: 'directory'; path: string };

/** Kubo's `ipfs add` options that we support (names as in Kubo, camelCased). */
export interface AddOptions {
  /** 0 (Kubo's default) or 1. */
  cidVersion: 0 | 1;
  /** Raw leaf blocks; Kubo's default is `cidVersion === 1`. */
  rawLeaves: boolean;
  /** Always wrap the top-level entries in one directory (Kubo `-w`). Several top-level entries are wrapped anyway. */
  wrapWithDirectory: boolean;
  /** Compute the CID, store nothing. */
  onlyHash: boolean;
  /** Record the root as pinned (Kubo pins; the embedded backend keeps every block regardless). */
  pin: boolean;
}

export interface AddResult {
  /** The CID of the one top-level entry, or of the wrapping directory. */
  cid: string;
}

export type IpfsObjectType = 'file' | 'directory';

export interface IpfsObjectStat {
  cid: string;
  type: IpfsObjectType;
  /** File size in bytes; 0 for a directory. */
  size: number;
}

export interface IpfsDirectoryEntry {
  name: string;
  cid: string;
  type: IpfsObjectType;
  /** File size in bytes; 0 for a directory. */
  size: number;
}

export interface CatRange {
  /** First byte to return (default 0). */
  offset?: number;
  /** Number of bytes to return (default: to the end). */
  length?: number;
}

/**
 * The IPFS backend. Errors are `DomainError`s: `request.not_found` for content this node does not
 * have (never a network search, never a hang), `request.invalid` for a path or object that
 * cannot serve the call (e.g. `cat` of a directory), `internal` when the node fails.
 */
export interface IpfsBackend {
  /**
   * Imports the entries in the order given (the caller streams them; each file's content is
   * consumed before the next entry is read) and returns the root CID. Entries come as
   * `addContent` (add-content.ts) passes them: canonical distinct paths, no directory entry for
   * a directory already given or implied. Fails without recording
   * a pin if the entries or any content stream fail; blocks already written may remain.
   */
  addEntries(entries: AsyncIterable<AddEntry>, options: AddOptions): Promise<AddResult>;
  /** Type and size of `cid` or of `path` under it. */
  stat(cid: string, path?: string): Promise<IpfsObjectStat>;
  /** Entries of the directory at `cid` or `path` under it; `request.invalid` if it is a file. */
  ls(cid: string, path?: string): AsyncIterable<IpfsDirectoryEntry>;
  /** Bytes of the file at `cid` or `path` under it, optionally a range of them. */
  cat(cid: string, path?: string, range?: CatRange): AsyncIterable<Uint8Array>;
  /** The node's peer id (`12D3KooW…` for Ed25519). */
  id(): Promise<string>;
  /** The node's software version. */
  version(): Promise<string>;
  close(): Promise<void>;
}

/** Kubo's add defaults: CIDv0, raw leaves only with CIDv1, no wrapping, pinned. */
export function defaultAddOptions(overrides: Partial<AddOptions> = {}): AddOptions {
  const cidVersion = overrides.cidVersion ?? 0;
  return {
    cidVersion,
    rawLeaves: overrides.rawLeaves ?? cidVersion === 1,
    wrapWithDirectory: overrides.wrapWithDirectory ?? false,
    onlyHash: overrides.onlyHash ?? false,
    pin: overrides.pin ?? true,
  };
}
