import { DomainError } from '../shared/errors.ts';
import type { IpfsBackend } from './ipfs-backend.ts';

const block = 512;
const encoder = new TextEncoder();

/**
 * A directory as a tar stream (POSIX ustar, with PAX headers for paths over ustar's limits and
 * files of 8 GiB or more), like `ipfs get` writes: the top directory is named `rootName` and
 * holds the tree, files with mode 0644, directories 0755, mtime 0 (UnixFS keeps none by default).
 * Streams file by file; memory stays bounded whatever the directory's size.
 */
export async function* directoryTar(backend: Pick<IpfsBackend, 'ls' | 'cat'>, cid: string, rootName: string): AsyncGenerator<Uint8Array> {
  yield* directory(backend, cid, rootName);
  yield new Uint8Array(block * 2); // end of archive
}

async function* directory(backend: Pick<IpfsBackend, 'ls' | 'cat'>, cid: string, path: string): AsyncGenerator<Uint8Array> {
  yield* header(`${path}/`, 0, '5');
  for await (const entry of backend.ls(cid)) {
    const childPath = `${path}/${entry.name}`;
    if (entry.type === 'directory') {
      yield* directory(backend, entry.cid, childPath);
      continue;
    }
    yield* header(childPath, entry.size, '0');
    let written = 0;
    for await (const chunk of backend.cat(entry.cid)) {
      written += chunk.byteLength;
      yield chunk;
    }
    if (written !== entry.size) throw new DomainError('internal', `${entry.cid} is ${written} bytes, its directory says ${entry.size}`);
    const padding = (block - (written % block)) % block;
    if (padding > 0) yield new Uint8Array(padding);
  }
}

/** A ustar header, preceded by a PAX extended header when the path or size does not fit. */
function* header(path: string, size: number, type: '0' | '5'): Generator<Uint8Array> {
  const records: string[] = [];
  const split = splitUstarPath(path);
  if (!split) records.push(paxRecord('path', path));
  if (size >= 8 * 1024 ** 3) records.push(paxRecord('size', String(size)));
  if (records.length > 0) {
    const body = encoder.encode(records.join(''));
    yield ustarHeader({ name: 'PaxHeader', prefix: '' }, body.byteLength, 'x');
    yield body;
    yield new Uint8Array((block - (body.byteLength % block)) % block);
  }
  yield ustarHeader(split ?? { name: truncateBytes(path, 100), prefix: '' }, size >= 8 * 1024 ** 3 ? 0 : size, type);
}

function ustarHeader(path: { name: string; prefix: string }, size: number, type: '0' | '5' | 'x'): Uint8Array {
  const bytes = new Uint8Array(block);
  const put = (offset: number, length: number, text: string) => bytes.set(encoder.encode(text).subarray(0, length), offset);
  put(0, 100, path.name);
  put(100, 8, type === '5' ? '0000755\0' : '0000644\0');
  put(108, 8, '0000000\0');
  put(116, 8, '0000000\0');
  put(124, 12, `${size.toString(8).padStart(11, '0')}\0`);
  put(136, 12, '00000000000\0');
  put(148, 8, '        ');
  put(156, 1, type);
  put(257, 6, 'ustar\0');
  put(263, 2, '00');
  put(345, 155, path.prefix);
  const checksum = bytes.reduce((sum, byte) => sum + byte, 0);
  put(148, 8, `${checksum.toString(8).padStart(6, '0')}\0 `);
  return bytes;
}

/** ustar's name (≤ 100 bytes) and prefix (≤ 155 bytes), split at a `/`; undefined if impossible. */
function splitUstarPath(path: string): { name: string; prefix: string } | undefined {
  const length = encoder.encode(path).byteLength;
  if (length <= 100) return { name: path, prefix: '' };
  for (let index = path.indexOf('/'); index !== -1; index = path.indexOf('/', index + 1)) {
    const prefix = path.slice(0, index);
    const name = path.slice(index + 1);
    if (encoder.encode(prefix).byteLength <= 155 && encoder.encode(name).byteLength <= 100 && name !== '') return { name, prefix };
  }
  return undefined;
}

/** `"<length> <key>=<value>\n"`, the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyBytes = encoder.encode(body).byteLength;
  const digits = String(bodyBytes).length;
  // The length counts its own digits, which may make it one digit longer (e.g. 98 + 2 → 100 + 3).
  const length = String(bodyBytes + digits).length > digits ? bodyBytes + digits + 1 : bodyBytes + digits;
  return `${length}${body}`;
}

function truncateBytes(text: string, maxBytes: number): string {
  let result = text;
  while (encoder.encode(result).byteLength > maxBytes) result = result.slice(0, -1);
  return result;
}
