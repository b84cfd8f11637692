/**
 * Caps of the IPFS API (docs/ipfs-api.md "Limits"). Every one is configurable; the defaults
 * suit NFT content: many files, some large, never unbounded.
 */
export interface IpfsLimits {
  /** Parts (files + directories) in one add request. */
  maxParts: number;
  /** Bytes of one add request body, multipart framing included. */
  maxTotalBytes: number;
  /** Bytes of a part without a file name (a plain form field taken as one unnamed file). */
  maxFieldBytes: number;
  /** Bytes of one part's header block. */
  maxPartHeaderBytes: number;
  /** UTF-8 bytes of one entry path (`a/b/c.txt`), after decoding. */
  maxPathBytes: number;
  /** UTF-8 bytes of one path segment (a file or directory name). */
  maxNameBytes: number;
  /**
   * Names in one path (`a/b/c.txt`: 3): how deep a tree may nest. The importer recurses once per
   * level, and ran out of stack near 2,000 (a 4,005-byte path, within `maxPathBytes`).
   */
  maxDepth: number;
}

export const defaultIpfsLimits: Readonly<IpfsLimits> = Object.freeze({
  maxParts: 10_000,
  maxTotalBytes: 64 * 1024 ** 3,
  maxFieldBytes: 100 * 1024 ** 2,
  maxPartHeaderBytes: 16 * 1024,
  maxPathBytes: 4096,
  maxNameBytes: 255,
  maxDepth: 256,
});

/** The defaults with some caps replaced. */
export function ipfsLimits(overrides: Partial<IpfsLimits> = {}): IpfsLimits {
  return { ...defaultIpfsLimits, ...overrides };
}
