import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import { parseParameters, queryUnescape } from './ipfs-add-parts.ts';
import { multipartBoundary, readMultipart } from './ipfs-multipart.ts';
import { boundary, multipartBody } from '../../../../test/support/ipfs-http.ts';

const limits = { maxParts: 100, maxTotalBytes: 10 * 1024 * 1024, maxPartHeaderBytes: 16 * 1024 };

async function* inPieces(body: Buffer, sizes: () => number): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < body.length; ) {
    const size = Math.max(1, sizes());
    yield body.subarray(offset, offset + size);
    offset += size;
  }
}

async function parse(body: Buffer, sizes: () => number) {
  const parts = [];
  for await (const part of readMultipart(inPieces(body, sizes), boundary, limits)) {
    const chunks: Uint8Array[] = [];
    for await (const chunk of part.body) chunks.push(chunk);
    parts.push({ headers: Object.fromEntries(part.headers), data: Buffer.concat(chunks).toString('latin1') });
  }
  return parts;
}

test('parts come out the same however the body is cut into chunks', async () => {
  // Data that looks like a boundary's beginning, CRs and LFs everywhere.
  const tricky = `\r\n--${boundary.slice(0, 10)}\r\n-\r\r\n\n--`;
  const body = multipartBody([
    { filename: 'a.txt', data: tricky },
    { filename: 'dir', contentType: 'application/x-directory' },
    { filename: 'b.bin', data: Buffer.alloc(70_000, 0x0d) },
    { filename: 'empty' },
  ]);
  const expected = await parse(body, () => body.length);
  assert.equal(expected.length, 4);
  assert.equal(expected[0]?.data, tricky);
  assert.equal(expected[2]?.data.length, 70_000);
  assert.equal(expected[3]?.data, '');
  assert.deepEqual(await parse(body, () => 1), expected);
  let seed = 7;
  assert.deepEqual(await parse(body, () => (seed = (seed * 48271) % 2147483647) % 97), expected);
});

test('a part left unread is skipped; a preamble and an epilogue are ignored', async () => {
  const body = Buffer.concat([Buffer.from('preamble\r\n'), multipartBody([{ filename: 'x', data: 'skip me' }, { filename: 'y', data: 'read me' }]), Buffer.from('epilogue')]);
  const names = [];
  for await (const part of readMultipart(inPieces(body, () => 5), boundary, limits)) names.push(part.headers.get('content-disposition'));
  assert.equal(names.length, 2);
});

test('framing errors are request.invalid', async () => {
  const cut = multipartBody([{ filename: 'x', data: 'abc' }]).subarray(0, 60);
  await assert.rejects(parse(cut, () => 8), (error: unknown) => error instanceof DomainError && error.code === 'request.invalid');
  assert.throws(() => multipartBoundary('multipart/form-data'), DomainError);
  assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b"'), 'a b');
  assert.equal(multipartBoundary('Multipart/Form-Data; boundary=xyz'), 'xyz');
});

test('file names: filename*, quoted pairs, and Kubo-style unescaping', () => {
  const simple = parseParameters('form-data; name="file"; filename="folder%2Fa+b.txt"');
  assert.equal(queryUnescape(simple.get('filename') ?? ''), 'folder/a b.txt');
  const extended = parseParameters(`form-data; name="file"; filename="x"; filename*=UTF-8''%EC%82%AC%EC%A7%84.png`);
  assert.equal(extended.get('filename*'), '사진.png');
  assert.equal(parseParameters('form-data; filename="a\\"b"').get('filename'), 'a"b');
  assert.equal(queryUnescape('100%'), '100%');
});
