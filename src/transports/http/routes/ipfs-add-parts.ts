import { DomainError } from '#shared/errors.ts';
import type { AddEntry } from '../../../ipfs/ipfs-backend.ts';
import { tooLarge, type MultipartPart } from './ipfs-multipart.ts';

/**
 * Multipart parts as add entries, the way Kubo's `/api/v0/add` reads them: the path is the part's
 * file name (`filename*` or `filename` of Content-Disposition), URL-unescaped like Go's
 * `url.QueryUnescape` (`%2F` → `/`, `+` → space); `Content-Type: application/x-directory` marks a
 * directory (no data). A part without a file name is one unnamed file of at most `maxFieldBytes`.
 * Refused (`request.invalid`): an `Abspath` header (filestore/urlstore is disabled), symlinks and
 * nested multipart parts. Paths are checked later, by `addContent`.
 */
export async function* partsToEntries(parts: AsyncIterable<MultipartPart>, maxFieldBytes: number): AsyncGenerator<AddEntry> {
  let index = 0;
  for await (const part of parts) {
    index++;
    if (part.headers.has('abspath')) {
      throw new DomainError('request.invalid', `part ${index} has an Abspath header: adding by reference (filestore, urlstore, nocopy) is disabled; send the data in the part`);
    }
    const disposition = parseParameters(part.headers.get('content-disposition') ?? '');
    const rawName = disposition.get('filename*') ?? disposition.get('filename');
    const name = rawName === undefined ? undefined : queryUnescape(rawName);
    const type = (part.headers.get('content-type') ?? 'application/octet-stream').split(';', 1)[0]?.trim().toLowerCase();
    if (type === 'application/x-directory') {
      for await (const chunk of part.body) {
        if (chunk.byteLength > 0) throw new DomainError('request.invalid', `directory part ${JSON.stringify(name ?? '')} must carry no data`);
      }
      yield { kind: 'directory', path: name ?? '' };
    } else if (type?.startsWith('multipart/')) {
      throw new DomainError('request.invalid', `part ${index} is a nested ${type}: send every file and directory as its own part with its path in the file name`);
    } else if (type === 'application/symlink') {
      throw new DomainError('request.invalid', `part ${index} is a symlink: symlinks are not supported`);
    } else if (name === undefined) {
      yield { kind: 'file', path: '', content: capped(part.body, maxFieldBytes) };
    } else {
      if (name === '') throw new DomainError('request.invalid', `part ${index} has an empty file name`);
      yield { kind: 'file', path: name, content: part.body };
    }
  }
}

async function* capped(body: AsyncIterable<Uint8Array>, maxBytes: number): AsyncGenerator<Uint8Array> {
  let total = 0;
  for await (const chunk of body) {
    total += chunk.byteLength;
    if (total > maxBytes) throw tooLarge(`a part without a file name is limited to ${maxBytes} bytes; name the file to send more`);
    yield chunk;
  }
}

/**
 * Parameters of a header like Content-Disposition (`form-data; name="file"; filename="a.txt"`),
 * names lower-cased; `filename*` (RFC 5987 `UTF-8''…`) is decoded.
 */
export function parseParameters(header: string): Map<string, string> {
  const parameters = new Map<string, string>();
  const pattern = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const match of header.matchAll(pattern)) {
    const key = (match[1] ?? '').toLowerCase();
    let value = match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '').trim();
    if (key.endsWith('*')) {
      const extended = /^([^']*)'[^']*'(.*)$/.exec(value);
      if (!extended) continue;
      try {
        value = decodeURIComponent(extended[2] ?? '');
      } catch {
        continue;
      }
    }
    parameters.set(key, value);
  }
  return parameters;
}

/** Go's `url.QueryUnescape`, falling back to the raw text on a bad escape as Kubo does. */
export function queryUnescape(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
