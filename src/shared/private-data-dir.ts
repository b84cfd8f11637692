import { chmodSync, mkdirSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

/** Directories the platform creates under DATA_DIR (owner only). */
export const privateDirMode = 0o700;
/** Files the platform creates under DATA_DIR (owner read/write only). */
export const privateFileMode = 0o600;

/**
 * Makes DATA_DIR private before anything is written to it: the SQLite file holds password hashes,
 * the transfer journal and unclaimed reward ids, and the IPFS blocks are users' files.
 *
 * - umask 077 for the whole process, so every file and directory created from here on is 0600 /
 *   0700, including those written by libraries (SQLite's -wal and -shm, blockstore-fs blocks) and
 *   by the anvil processes we spawn (a child inherits the umask);
 * - DATA_DIR itself is created 0700, and an existing one (of an earlier version) is set to 0700,
 *   which closes everything already in it to other users.
 *
 * Call it once where the process starts the platform; the places that write files give their
 * modes explicitly as well.
 */
export function preparePrivateDataDir(dataDir: string): void {
  // A worker thread cannot set the umask (Node throws); its process's main thread has done so.
  if (isMainThread) process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: privateDirMode });
  chmodSync(dataDir, privateDirMode);
}
