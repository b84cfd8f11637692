import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { FsBlockstore } from 'blockstore-fs';
import { addContent } from './add-content.ts';
import { createEmbeddedBackend } from './embedded-backend.ts';
import { defaultIpfsLimits } from './ipfs-limits.ts';
import { defaultAddOptions } from './ipfs-backend.ts';
import { all, assertCode, entries, file, ipfsBackendContract } from '../../test/support/ipfs-backend-contract.ts';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'vixpay-ipfs-'));
  dirs.push(dir);
  return dir;
}
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

ipfsBackendContract('embedded', async () => createEmbeddedBackend({ dataDir: await tempDir() }));

test('embedded: the peer id is generated once and kept in DATA_DIR', async () => {
  const dataDir = await tempDir();
  const first = await createEmbeddedBackend({ dataDir });
  const id = await first.id();
  await first.close();
  const second = await createEmbeddedBackend({ dataDir });
  assert.equal(await second.id(), id);
  assert.match(id, /^12D3KooW/);
  await second.close();
  const key = await stat(path.join(dataDir, 'ipfs', 'identity.pem'));
  assert.equal(key.mode & 0o777, 0o600);
});

test('embedded: entries in any order give the same tree as depth-first', async () => {
  const ipfs = await createEmbeddedBackend({ dataDir: await tempDir() });
  const scrambled = entries(
    file('moons/saturn/titan.txt', 'Hello Titan!\n'),
    file('moons/jupiter/europa.txt', 'Hello Europa!\n'),
    { kind: 'directory', path: 'moons/saturn' },
    file('moons/mercury.txt', 'hey youre no moon!\n'),
  );
  const added = await addContent(ipfs, { entries: scrambled, options: defaultAddOptions(), limits: defaultIpfsLimits });
  assert.equal(added.cid, 'QmVKvomp91nMih5j6hYBA8KjbiaYvEetU2Q7KvtZkLe9nQ'); // Kubo, given depth-first
  await ipfs.close();
});

test('embedded: pins record the root only for a stored, successful add', async () => {
  const dataDir = await tempDir();
  const ipfs = await createEmbeddedBackend({ dataDir });
  const pins = path.join(dataDir, 'ipfs', 'pins');
  const { cid } = await ipfs.addEntries(entries(file('a.txt', 'a')), defaultAddOptions());
  await ipfs.addEntries(entries(file('b.txt', 'b')), defaultAddOptions({ onlyHash: true }));
  await ipfs.addEntries(entries(file('c.txt', 'c')), defaultAddOptions({ pin: false }));
  async function* failing() {
    yield* entries(file('d.txt', 'd'));
    throw new Error('client went away');
  }
  await assert.rejects(ipfs.addEntries(failing(), defaultAddOptions()), /client went away/);
  assert.deepEqual(await readdir(pins), [cid]);
  await ipfs.close();
});

test('embedded: an unnamed file must be alone and is never wrapped', async () => {
  const ipfs = await createEmbeddedBackend({ dataDir: await tempDir() });
  assert.equal((await ipfs.addEntries(entries(file('', 'hello world\n')), defaultAddOptions())).cid, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
  await assertCode(ipfs.addEntries(entries(file('', 'x'), file('y', 'y')), defaultAddOptions()), 'request.invalid');
  await assertCode(ipfs.addEntries(entries(file('', 'x')), defaultAddOptions({ wrapWithDirectory: true })), 'request.invalid');
  await assertCode(ipfs.addEntries(entries(), defaultAddOptions()), 'request.invalid');
  assert.deepEqual(await all(ipfs.ls('QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn')).catch((e: Error) => e.name), 'DomainError');
  await ipfs.close();
});

test('embedded: a file of identical chunks (zero padding) is written once per block', async (t) => {
  const ipfs = await createEmbeddedBackend({ dataDir: await tempDir() });
  const zeros = new Uint8Array(1024 * 1024);
  async function* content(): AsyncGenerator<Uint8Array> {
    for (let i = 0; i < 32; i++) yield zeros;
  }
  // blockstore-fs alone retries colliding writes of one block for up to a second each: count them.
  const puts = t.mock.method(FsBlockstore.prototype, 'put');
  const { cid } = await ipfs.addEntries(entries({ kind: 'file', path: 'zeros', content: content() }), defaultAddOptions());
  // 128 identical 256 KiB leaves are one block; with the file's root and the directory wrapping
  // "zeros", three blocks, each written once.
  const written = puts.mock.calls.map((call) => String(call.arguments[0]));
  puts.mock.restore();
  assert.equal(written.length, 3, `blocks written: ${written.join(', ')}`);
  assert.equal(new Set(written).size, 3, `blocks written: ${written.join(', ')}`);
  assert.ok(written.includes(cid));
  assert.deepEqual(await ipfs.stat(cid), { cid, type: 'file', size: 32 * 1024 * 1024 });
  await ipfs.close();
});
