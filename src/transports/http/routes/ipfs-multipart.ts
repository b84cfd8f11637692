import { DomainError } from '#shared/errors.ts';

/** One part of a `multipart/form-data` body: its headers and its streamed data. */
export interface MultipartPart {
  /** Header names lower-cased. */
  headers: ReadonlyMap<string, string>;
  /** The part's data. Read it (or leave it: it is skipped) before asking for the next part. */
  body: AsyncIterable<Uint8Array>;
}

export interface MultipartLimits {
  maxParts: number;
  maxTotalBytes: number;
  maxPartHeaderBytes: number;
}

/** An HTTP-level refusal (status + stable code) for what the domain never sees: body size. */
export class HttpRequestError extends Error {
  override name = 'HttpRequestError';
  readonly statusCode: number;
  readonly code: string;
  constructor(statusCode: number, code: string, message: string) {
    super(message);
    this.statusCode = statusCode;
    this.code = code;
  }
}

export function tooLarge(message: string): HttpRequestError {
  return new HttpRequestError(413, 'request.too_large', message);
}

/** The boundary of a `multipart/form-data` content type; `request.invalid` when missing. */
export function multipartBoundary(contentType: string | undefined): string {
  const match = /^\s*multipart\/form-data\s*;(?:.*;)?\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType ?? '');
  const boundary = match?.[1] ?? match?.[2];
  if (!boundary) throw new DomainError('request.invalid', 'Content-Type must be multipart/form-data with a boundary');
  return boundary;
}

const crlf = Buffer.from('\r\n');
const headerEnd = Buffer.from('\r\n\r\n');

/**
 * Streams the parts of a multipart body (RFC 7578) with bounded memory: part data is handed on
 * as it arrives, only a boundary's length is held back. Malformed framing is `request.invalid`;
 * more than `maxParts` parts or `maxTotalBytes` bytes is 413 `request.too_large`.
 */
export async function* readMultipart(source: AsyncIterable<Uint8Array>, boundary: string, limits: MultipartLimits): AsyncGenerator<MultipartPart> {
  const input = source[Symbol.asyncIterator]();
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first delimiter may open the body without a CRLF before it.
  let buffer: Buffer = Buffer.from(crlf);
  let ended = false;
  let total = 0;

  async function more(): Promise<boolean> {
    if (ended) return false;
    const next = await input.next();
    if (next.done) {
      ended = true;
      return false;
    }
    total += next.value.byteLength;
    if (total > limits.maxTotalBytes) throw tooLarge(`request body is larger than ${limits.maxTotalBytes} bytes`);
    const chunk = Buffer.from(next.value.buffer, next.value.byteOffset, next.value.byteLength);
    buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
    return true;
  }

  /** Data up to the next delimiter, which is consumed; `partEnded` is set once it is found. */
  let partEnded: boolean;
  async function* untilDelimiter(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const index = buffer.indexOf(delimiter);
      if (index !== -1) {
        const data = buffer.subarray(0, index);
        buffer = buffer.subarray(index + delimiter.length);
        partEnded = true;
        if (data.length > 0) yield data;
        return;
      }
      const safe = buffer.length - heldBack(buffer, delimiter);
      if (safe > 0) {
        const data = buffer.subarray(0, safe);
        buffer = buffer.subarray(safe);
        yield data;
      }
      if (!(await more())) throw malformed('the body ended inside a part (upload cut short?)');
    }
  }

  async function skipPart(): Promise<void> {
    for await (const _ of untilDelimiter()) {
      // skipped
    }
  }

  async function need(bytes: number): Promise<void> {
    while (buffer.length < bytes) if (!(await more())) throw malformed('the body ended inside a part header');
  }

  await skipPart(); // the preamble
  for (let parts = 0; ; parts++) {
    // After a delimiter: `--` closes the body, otherwise the rest of the line must be blank.
    await need(2);
    if (buffer[0] === 0x2d && buffer[1] === 0x2d) break;
    let lineEnd = buffer.indexOf(crlf);
    while (lineEnd === -1) {
      if (buffer.length > 1024) throw malformed('garbage after a boundary');
      await need(buffer.length + 1);
      lineEnd = buffer.indexOf(crlf);
    }
    if (buffer.subarray(0, lineEnd).toString('latin1').trim() !== '') throw malformed('garbage after a boundary');
    buffer = buffer.subarray(lineEnd); // keep the CRLF: an empty header block is then CRLF CRLF
    let end = buffer.indexOf(headerEnd);
    while (end === -1) {
      if (buffer.length > limits.maxPartHeaderBytes) throw new DomainError('request.invalid', `a part's headers are longer than ${limits.maxPartHeaderBytes} bytes`);
      await need(buffer.length + 1);
      end = buffer.indexOf(headerEnd);
    }
    if (end > limits.maxPartHeaderBytes) throw new DomainError('request.invalid', `a part's headers are longer than ${limits.maxPartHeaderBytes} bytes`);
    const headers = parseHeaders(buffer.subarray(2, end).toString('utf8'));
    buffer = buffer.subarray(end + headerEnd.length);
    if (parts + 1 > limits.maxParts) throw tooLarge(`more than ${limits.maxParts} parts`);
    partEnded = false;
    yield { headers, body: untilDelimiter() };
    if (!partEnded) await skipPart();
  }
  // The epilogue, if any, is read and ignored so the connection stays clean.
  while (await more()) buffer = Buffer.alloc(0);
}

/**
 * How many trailing bytes of `buffer` could be the start of a delimiter split across chunks.
 * Usually none, so the next chunk is used as is, never copied (uploads churn less memory).
 */
function heldBack(buffer: Buffer, delimiter: Buffer): number {
  const start = Math.max(0, buffer.length - (delimiter.length - 1));
  for (let index = buffer.indexOf(0x0d, start); index !== -1; index = buffer.indexOf(0x0d, index + 1)) {
    if (buffer.subarray(index).equals(delimiter.subarray(0, buffer.length - index))) return buffer.length - index;
  }
  return 0;
}

function parseHeaders(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  let last: string | undefined;
  for (const line of block === '' ? [] : block.split('\r\n')) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && last) {
      headers.set(last, `${headers.get(last)} ${line.trim()}`);
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed(`bad part header line ${JSON.stringify(line.slice(0, 80))}`);
    last = line.slice(0, colon).trim().toLowerCase();
    headers.set(last, line.slice(colon + 1).trim());
  }
  return headers;
}

function malformed(reason: string): DomainError {
  return new DomainError('request.invalid', `malformed multipart body: ${reason}`);
}
