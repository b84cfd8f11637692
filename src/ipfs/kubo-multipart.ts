import { randomBytes } from 'node:crypto';
import { DomainError } from '../shared/errors.ts';
import { parentPaths } from './entry-path.ts';
import type { AddEntry } from './ipfs-backend.ts';

const encoder = new TextEncoder();

/** A `multipart/form-data` body for Kubo's `/api/v0/add`, streamed entry by entry. */
export interface KuboAddBody {
  contentType: string;
  body: AsyncIterable<Uint8Array>;
}

/**
 * Encodes entries as Kubo's own clients do (part `file`, the path percent-encoded in the file
 * name, `application/x-directory` for directories), streaming each file's content through.
 * Kubo walks the parts as a depth-first tree and silently drops a part that comes back into a
 * directory it already left, so such an order is refused here (`request.invalid`) instead.
 */
export function kuboAddBody(entries: AsyncIterable<AddEntry>): KuboAddBody {
  const boundary = `vixpay-${randomBytes(16).toString('hex')}`;
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: encode(entries, boundary) };
}

async function* encode(entries: AsyncIterable<AddEntry>, boundary: string): AsyncGenerator<Uint8Array> {
  const order = depthFirstCheck();
  for await (const entry of entries) {
    order(entry);
    const type = entry.kind === 'directory' ? 'application/x-directory' : 'application/octet-stream';
    yield encoder.encode(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${encodeURIComponent(entry.path)}"\r\n` +
        `Content-Type: ${type}\r\n\r\n`,
    );
    if (entry.kind === 'file') yield* entry.content;
    yield encoder.encode('\r\n');
  }
  yield encoder.encode(`--${boundary}--\r\n`);
}

/** Throws when an entry re-enters a directory that earlier entries already left. */
function depthFirstCheck(): (entry: AddEntry) => void {
  const open: string[] = [];
  const closed = new Set<string>();
  return (entry) => {
    const containers = parentPaths(entry.path);
    if (entry.kind === 'directory') containers.push(entry.path);
    while (open.length > 0 && !containers.includes(open.at(-1) as string)) closed.add(open.pop() as string);
    for (const dir of containers) {
      if (closed.has(dir)) {
        throw new DomainError('request.invalid', `part ${JSON.stringify(entry.path)} comes back into ${JSON.stringify(dir)} after other parts; this IPFS node needs parts in depth-first order`);
      }
      if (!open.includes(dir)) open.push(dir);
    }
  };
}
