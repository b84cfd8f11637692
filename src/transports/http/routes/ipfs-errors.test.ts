import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { auth, boundary, buildTestApp, inject, multipartBody, multipartHeaders, type TestApp, type TestPart } from '../../../../test/support/ipfs-http.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp({ maxParts: 5, maxTotalBytes: 2 * 1024 * 1024, maxFieldBytes: 1000 });
});
after(async () => t.close());

async function expectError(response: { statusCode: number; json(): any; body: string }, status: number, code: string, message?: RegExp) {
  assert.equal(response.statusCode, status, response.body);
  const body = response.json();
  assert.equal(body.error.code, code, response.body);
  assert.equal(typeof body.error.message, 'string');
  if (message) assert.match(body.error.message, message);
}

const hello: TestPart = { filename: 'hello.txt', data: 'hello world\n' };

describe('IPFS API refusals', () => {
  test('no or bad JWT is 401 on every route, before the upload is read', async () => {
    const cid = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';
    for (const url of ['/v1/ipfs/id', '/v1/ipfs/version', `/v1/ipfs/${cid}`, `/v1/ipfs/${cid}/get`]) {
      await expectError(await t.app.inject({ url }), 401, 'request.unauthorized');
      await expectError(await t.app.inject({ url, headers: { authorization: 'Bearer wrong' } }), 401, 'request.unauthorized');
    }
    const { authorization: _, ...noAuth } = multipartHeaders;
    await expectError(await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: noAuth, payload: multipartBody([hello]) }), 401, 'request.unauthorized');
    await expectError(await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: { ...multipartHeaders, authorization: 'Basic abc' }, payload: multipartBody([hello]) }), 401, 'request.unauthorized');
  });

  test('bad paths: "..", absolute, NUL, backslash, too long', async () => {
    await expectError(await inject(t.app, [{ filename: '../etc/passwd', data: 'x' }]), 400, 'request.invalid', /"\.\."/);
    await expectError(await inject(t.app, [{ filename: 'a/../../b', data: 'x' }]), 400, 'request.invalid', /"\.\."/);
    await expectError(await inject(t.app, [{ filename: '/etc/passwd', data: 'x' }]), 400, 'request.invalid', /absolute/);
    await expectError(await inject(t.app, [{ filename: '%2Fetc%2Fpasswd', data: 'x' }]), 400, 'request.invalid', /absolute/);
    await expectError(await inject(t.app, [{ filename: 'a%00b.txt', data: 'x' }]), 400, 'request.invalid', /control character/);
    await expectError(await inject(t.app, [{ filename: 'a%5Cb.txt', data: 'x' }]), 400, 'request.invalid', /backslash/);
    await expectError(await inject(t.app, [{ filename: `${'n'.repeat(256)}.txt`, data: 'x' }]), 400, 'request.invalid', /255 bytes/);
    await expectError(await inject(t.app, [{ filename: `${'d'.repeat(200)}/`.repeat(21) + 'f', data: 'x' }]), 400, 'request.invalid', /4096 bytes/);
    await expectError(await inject(t.app, [{ filename: 'a/b', data: 'x' }, { filename: 'a/b', data: 'y' }]), 400, 'request.invalid', /twice/);
    await expectError(await inject(t.app, [{ filename: 'a', data: 'x' }, { filename: 'a/b', data: 'y' }]), 400, 'request.invalid', /is a file/);
  });

  test('malformed multipart and wrong content types', async () => {
    const truncated = multipartBody([hello]).subarray(0, 150);
    await expectError(await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: multipartHeaders, payload: truncated }), 400, 'request.invalid', /malformed multipart/);
    const noBoundary = { ...multipartHeaders, 'content-type': 'multipart/form-data' };
    await expectError(await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: noBoundary, payload: multipartBody([hello]) }), 400, 'request.invalid', /boundary/);
    const garbage = Buffer.from(`--${boundary}\r\nthis is not a header\r\n\r\nx\r\n--${boundary}--\r\n`);
    await expectError(await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: multipartHeaders, payload: garbage }), 400, 'request.invalid', /header/);
    const json = await t.app.inject({ method: 'POST', url: '/v1/ipfs/add', headers: { ...auth, 'content-type': 'application/json' }, payload: '{}' });
    await expectError(json, 400, 'request.invalid', /multipart\/form-data/);
    await expectError(await inject(t.app, []), 400, 'request.invalid', /nothing to add/);
  });

  test('Abspath (filestore), nested multipart, symlinks, data in a directory part', async () => {
    await expectError(await inject(t.app, [{ ...hello, headers: { Abspath: '/home/me/hello.txt' } }]), 400, 'request.invalid', /Abspath.*disabled/);
    await expectError(await inject(t.app, [{ filename: 'd', contentType: 'multipart/mixed; boundary=x' }]), 400, 'request.invalid', /nested/);
    await expectError(await inject(t.app, [{ filename: 'l', contentType: 'application/symlink', data: 'target' }]), 400, 'request.invalid', /symlink/);
    await expectError(await inject(t.app, [{ filename: 'd', contentType: 'application/x-directory', data: 'oops' }]), 400, 'request.invalid', /no data/);
    await expectError(await inject(t.app, [hello], '?nocopy=true'), 400, 'request.invalid', /filestore/);
  });

  test('query options outside the profile are refused', async () => {
    await expectError(await inject(t.app, [hello], '?cid-version=2'), 400, 'request.invalid', /cid-version/);
    await expectError(await inject(t.app, [hello], '?chunker=size-1024'), 400, 'request.invalid', /chunker/);
    await expectError(await inject(t.app, [hello], '?trickle=true'), 400, 'request.invalid', /trickle/);
    await expectError(await inject(t.app, [hello], '?pin=maybe'), 400, 'request.invalid', /pin/);
    await expectError(await inject(t.app, [hello], '?frobnicate=1'), 400, 'request.invalid', /frobnicate/);
    assert.equal((await inject(t.app, [hello], '?chunker=size-262144&progress=true&stream-channels=true')).statusCode, 200);
  });

  test('more parts or bytes than the caps is 413, and nothing is pinned', async () => {
    const pinsBefore = await readdir(path.join(t.dataDir, 'ipfs', 'pins'));
    const six = Array.from({ length: 6 }, (_, i) => ({ filename: `f${i}`, data: String(i) }));
    await expectError(await inject(t.app, six), 413, 'request.too_large', /5 parts/);
    const big = { filename: 'big', data: new Uint8Array(3 * 1024 * 1024) };
    await expectError(await inject(t.app, [big]), 413, 'request.too_large', /bytes/);
    await expectError(await inject(t.app, [{ data: 'x'.repeat(1001) }]), 413, 'request.too_large', /without a file name/);
    assert.deepEqual(await readdir(path.join(t.dataDir, 'ipfs', 'pins')), pinsBefore);
  });

  test('an unnamed part is one file; it must be alone', async () => {
    const single = await inject(t.app, [{ data: 'hello world\n' }]);
    assert.equal(single.json().cid, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
    await expectError(await inject(t.app, [{ data: 'x' }, hello]), 400, 'request.invalid', /only part/);
  });

  test('unknown CID is a 404 (no search: the timeout fails a hang), a malformed one 400, a missing sub path 404', { timeout: 60_000 }, async () => {
    await expectError(await t.app.inject({ url: '/v1/ipfs/QmNLei78zWmzUdbeRB3CiUfAizWUrbeeZh5K1rhAQKCh51', headers: auth }), 404, 'request.not_found');
    await expectError(await t.app.inject({ url: '/v1/ipfs/bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/get', headers: auth }), 404, 'request.not_found');
    await expectError(await t.app.inject({ url: '/v1/ipfs/not-a-cid', headers: auth }), 400, 'request.invalid', /not a valid CID/);
    await expectError(await t.app.inject({ url: '/v1/ipfs/QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5/get', headers: auth }), 400, 'request.invalid');
    const dir = (await inject(t.app, [{ filename: 'd/a.txt', data: 'a' }])).json().cid;
    await expectError(await t.app.inject({ url: `/v1/ipfs/${dir}?path=b.txt`, headers: auth }), 404, 'request.not_found');
    await expectError(await t.app.inject({ url: `/v1/ipfs/${dir}?path=../x`, headers: auth }), 400, 'request.invalid');
  });

  test('the server keeps serving after every refusal', async () => {
    const response = await inject(t.app, [hello]);
    assert.equal(response.statusCode, 200);
    assert.equal(response.json().cid, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
  });
});
