import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { deterministicBytes } from '../../../../test/support/deterministic-bytes.ts';
import { auth, buildTestApp, inject, type TestApp } from '../../../../test/support/ipfs-http.ts';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

const planets = [
  { filename: 'planets/mars.txt', data: 'Hello Mars!\n' },
  { filename: 'planets/venus.txt', data: 'Hello Venus!\n' },
];

describe('POST /v1/ipfs/add', () => {
  test('a single file gets the CID Kubo gives it', async () => {
    const response = await inject(t.app, [{ filename: 'hello.txt', data: 'hello world\n' }]);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(response.json(), { cid: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o' });
  });

  test('known answers: empty file, "hello world", empty directory, 256 KiB + 1', async () => {
    const cid = async (parts: Parameters<typeof inject>[1], query = '') => (await inject(t.app, parts, query)).json().cid;
    assert.equal(await cid([{ filename: 'empty' }]), 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH');
    assert.equal(await cid([{ filename: 'hw', data: 'hello world' }]), 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD');
    assert.equal(await cid([{ filename: 'emptyDir', contentType: 'application/x-directory' }]), 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn');
    assert.equal(await cid([{ filename: 'f', data: deterministicBytes(262_145, 'chunk-v0-seed') }]), 'QmYyLxtzZyW22zpoVAtKANLRHpDjZtNeDjQdJrcQNWoRkJ');
    assert.equal(await cid([{ filename: 'hw', data: 'hello world' }], '?cid-version=1'), 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e');
  });

  test('a directory from file paths, in any order, with or without directory parts', async () => {
    const expected = 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY';
    assert.equal((await inject(t.app, planets)).json().cid, expected);
    assert.equal((await inject(t.app, [planets[1]!, { filename: 'planets', contentType: 'application/x-directory' }, planets[0]!])).json().cid, expected);
    assert.equal((await inject(t.app, [{ filename: 'planets', contentType: 'application/x-directory' }, ...planets])).json().cid, expected);
    // Kubo's clients percent-encode the path in the file name.
    assert.equal((await inject(t.app, planets.map((p) => ({ ...p, filename: encodeURIComponent(p.filename) })))).json().cid, expected);
  });

  test('several top-level entries are wrapped; wrap-with-directory wraps one', async () => {
    const two = await inject(t.app, [{ filename: 'mars.txt', data: 'Hello Mars!\n' }, { filename: 'venus.txt', data: 'Hello Venus!\n' }]);
    assert.equal(two.json().cid, 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY');
    const one = await inject(t.app, [{ filename: 'hello.txt', data: 'Hello Worlds!\n' }], '?wrap-with-directory=true');
    assert.equal(one.json().cid, 'QmVJfrqd4ogGZME6LWkkikAGddYgh9dBs2U14DHZZUBk7W');
  });

  test('cid-version, raw-leaves, only-hash, pin', async () => {
    assert.equal((await inject(t.app, planets, '?cid-version=1')).json().cid, 'bafybeih7e5dmkyk25up5vxug4q3hrg2fxbzf23dfrac2fns5h7z4aa7ioi');
    assert.equal((await inject(t.app, planets, '?cid-version=1&raw-leaves=false')).json().cid, 'bafybeif5tuep5ap2d7zyhbktucey75aoacxufgt6i3v4gebmixyipnyp7y');
    assert.equal((await inject(t.app, planets, '?raw-leaves=true&pin=false')).json().cid, 'QmfWfQfKCY5Ukv9peBbxM5vqWM9BzmqUSXvdCgjT2wsiBT');
    const hashed = await inject(t.app, [{ filename: 'x', data: 'only hashed, never stored' }], '?only-hash=true');
    assert.equal(hashed.statusCode, 200);
    const read = await t.app.inject({ url: `/v1/ipfs/${hashed.json().cid}`, headers: auth });
    assert.equal(read.statusCode, 404);
  });
});

describe('GET /v1/ipfs/:cid and /:cid/get', () => {
  let fileCid: string;
  let dirCid: string;
  const big = deterministicBytes(700_000, 'get-range');
  let bigCid: string;
  before(async () => {
    fileCid = (await inject(t.app, [{ filename: 'hello.txt', data: 'hello world\n' }])).json().cid;
    dirCid = (await inject(t.app, planets)).json().cid;
    bigCid = (await inject(t.app, [{ filename: 'big.bin', data: big }])).json().cid;
  });

  test('a file as text, a sub path, a directory as JSON', async () => {
    const file = await t.app.inject({ url: `/v1/ipfs/${fileCid}`, headers: auth });
    assert.equal(file.statusCode, 200);
    assert.equal(file.body, 'hello world\n');
    assert.match(String(file.headers['content-type']), /^text\/plain/);
    const sub = await t.app.inject({ url: `/v1/ipfs/${dirCid}?path=venus.txt`, headers: auth });
    assert.equal(sub.body, 'Hello Venus!\n');
    const dir = await t.app.inject({ url: `/v1/ipfs/${dirCid}`, headers: auth });
    assert.deepEqual(dir.json(), {
      cid: dirCid,
      entries: [
        { name: 'mars.txt', cid: 'QmPrrHqJzto9m7SyiRzarwkqPcCSsKR2EB1AyqJfe8L8tN', type: 'file', size: 12 },
        { name: 'venus.txt', cid: 'QmU5kp3BH3B8tnWUU2Pikdb2maksBNkb92FHRr56hyghh4', type: 'file', size: 13 },
      ],
    });
  });

  test('/get sends bytes as an attachment named by ?filename= or the CID, sanitised', async () => {
    const named = await t.app.inject({ url: `/v1/ipfs/${fileCid}/get?filename=greeting.txt`, headers: auth });
    assert.equal(named.statusCode, 200);
    assert.equal(named.headers['content-type'], 'application/octet-stream');
    assert.equal(named.headers['content-disposition'], 'attachment; filename="greeting.txt"');
    assert.equal(named.body, 'hello world\n');
    const unnamed = await t.app.inject({ url: `/v1/ipfs/${fileCid}/get`, headers: auth });
    assert.equal(unnamed.headers['content-disposition'], `attachment; filename="${fileCid}"`);
    const hostile = await t.app.inject({ url: `/v1/ipfs/${fileCid}/get?filename=${encodeURIComponent('../../etc/"pa\r\nss".txt')}`, headers: auth });
    assert.equal(hostile.headers['content-disposition'], 'attachment; filename="pass.txt"');
    const unicode = await t.app.inject({ url: `/v1/ipfs/${fileCid}/get?filename=${encodeURIComponent('사진.png')}`, headers: auth });
    assert.equal(unicode.headers['content-disposition'], `attachment; filename="__.png"; filename*=UTF-8''${encodeURIComponent('사진.png')}`);
  });

  test('/get answers a Range with 206 and the exact bytes, 416 outside the file', async () => {
    const ranged = await t.app.inject({ url: `/v1/ipfs/${bigCid}/get`, headers: { ...auth, range: 'bytes=262000-300000' } });
    assert.equal(ranged.statusCode, 206);
    assert.equal(ranged.headers['content-range'], `bytes 262000-300000/${big.length}`);
    assert.deepEqual(new Uint8Array(ranged.rawPayload), big.subarray(262_000, 300_001));
    const suffix = await t.app.inject({ url: `/v1/ipfs/${bigCid}/get`, headers: { ...auth, range: 'bytes=-10' } });
    assert.deepEqual(new Uint8Array(suffix.rawPayload), big.subarray(big.length - 10));
    const whole = await t.app.inject({ url: `/v1/ipfs/${bigCid}/get`, headers: auth });
    assert.deepEqual(new Uint8Array(whole.rawPayload), big);
    const outside = await t.app.inject({ url: `/v1/ipfs/${bigCid}/get`, headers: { ...auth, range: `bytes=${big.length}-` } });
    assert.equal(outside.statusCode, 416);
    assert.equal(outside.headers['content-range'], `bytes */${big.length}`);
  });

  test('/get of a directory is a tar of the tree', async () => {
    const response = await t.app.inject({ url: `/v1/ipfs/${dirCid}/get?filename=planets`, headers: auth });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers['content-type'], 'application/x-tar');
    assert.equal(response.headers['content-disposition'], 'attachment; filename="planets.tar"');
    const tar = response.rawPayload;
    const names: string[] = [];
    for (let offset = 0; offset + 512 <= tar.length; ) {
      const name = tar.subarray(offset, offset + 100).toString('utf8').replace(/\0.*$/s, '');
      if (name === '') break;
      const size = parseInt(tar.subarray(offset + 124, offset + 136).toString('latin1'), 8);
      names.push(`${name}:${tar.subarray(offset + 512, offset + 512 + size).toString()}`);
      offset += 512 + Math.ceil(size / 512) * 512;
    }
    assert.deepEqual(names, ['planets/:', 'planets/mars.txt:Hello Mars!\n', 'planets/venus.txt:Hello Venus!\n']);
  });

  test('id and version are routes, not CIDs', async () => {
    const id = await t.app.inject({ url: '/v1/ipfs/id', headers: auth });
    assert.equal(id.statusCode, 200);
    assert.match(id.json().id, /^12D3KooW/);
    const version = await t.app.inject({ url: '/v1/ipfs/version', headers: auth });
    assert.equal(typeof version.json().version, 'string');
  });
});
