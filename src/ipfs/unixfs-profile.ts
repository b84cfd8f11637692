import type { ImporterOptions } from 'ipfs-unixfs-importer';
import { fixedSize } from 'ipfs-unixfs-importer/chunker';
import { balanced } from 'ipfs-unixfs-importer/layout';
import type { AddOptions } from './ipfs-backend.ts';
import { kuboFileBuilder } from './unixfs-file-builder.ts';

/** Kubo's default chunk size (`--chunker=size-262144`). */
export const kuboChunkSize = 262_144;
/** Kubo's (boxo's) `helpers.DefaultLinksPerBlock`: children per node of the balanced file DAG. */
export const kuboMaxChildrenPerNode = 174;
/** Kubo's `Import.UnixFSHAMTDirectorySizeThreshold` default: flat directories above it are sharded. */
export const kuboShardSplitThresholdBytes = 262_144;

/**
 * ipfs-unixfs-importer options that reproduce `ipfs add` with Kubo's defaults (IPIP-499
 * profile `unixfs-v0-2015`, Kubo's implicit default): sha2-256, fixed 256 KiB chunks, balanced
 * layout with at most 174 links per node, leaves wrapped as UnixFS `file` nodes unless raw
 * leaves are asked for, a one-chunk file reduced to its leaf, HAMT sharding of a directory whose
 * links (name + CID bytes) exceed 256 KiB (`links-bytes`, Kubo's `links` estimation), no mtime
 * or mode. With `cidVersion: 1` Kubo switches raw leaves on unless told otherwise; that default
 * is applied by the caller (`defaultAddOptions`), here `rawLeaves` is taken as given.
 *
 * Checked against CIDs published by Kubo's own tests in `known-answers.test.ts`.
 *
 * Files are assembled by `kuboFileBuilder` (unixfs-file-builder.ts): same nodes, but correct for
 * files over 2 GiB and in a few MiB of memory whatever the file size.
 *
 * `fileImportConcurrency: 1` keeps the import streaming: the importer asks for the next entry only
 * after the previous file is consumed, which a multipart upload requires (parts arrive in order).
 */
export function kuboImporterOptions(options: Pick<AddOptions, 'cidVersion' | 'rawLeaves'>): ImporterOptions {
  return {
    cidVersion: options.cidVersion,
    rawLeaves: options.rawLeaves,
    leafType: 'file',
    reduceSingleLeafToSelf: true,
    chunker: fixedSize({ chunkSize: kuboChunkSize }),
    layout: balanced({ maxChildrenPerNode: kuboMaxChildrenPerNode }),
    fileBuilder: kuboFileBuilder,
    shardSplitStrategy: 'links-bytes',
    shardSplitThresholdBytes: kuboShardSplitThresholdBytes,
    fieldOrder: 'links-first',
    fileImportConcurrency: 1,
    blockWriteConcurrency: 8,
  };
}

