import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { sql } from 'kysely';
import { openStore, type Store } from '../store/db.ts';
import { createPostgresBackend } from './postgres-backend.ts';
import { defaultAddOptions, type IpfsBackend } from './ipfs-backend.ts';
import { freshPostgresSchema } from '../../test/support/store-factories.ts';
import { privatePostgresMissing, startPrivatePostgres } from '../../test/support/private-postgres.ts';
import { deterministicBytes, deterministicStream } from '../../test/support/deterministic-bytes.ts';
import { assertCode, bytes, entries, file, ipfsBackendContract } from '../../test/support/ipfs-backend-contract.ts';

// IPFS_BLOCKSTORE=postgres on the test PostgreSQL, a schema per test. "An instance" here is what a
// server process holds: its own store (pool) and its own DATA_DIR; two of them on one schema are
// two instances of a fleet.
const cleanups: Array<() => Promise<unknown>> = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'vixpay-ipfs-pg-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

async function fleetSchema(): Promise<string> {
  const schema = await freshPostgresSchema('vixpay_ipfs');
  cleanups.push(() => schema.drop());
  return schema.databaseUrl;
}

async function instance(databaseUrl: string, options: { cacheBytes?: number } = {}): Promise<{ ipfs: IpfsBackend; store: Store }> {
  const store = await openStore({ databaseUrl, dataDir: await tempDir() });
  cleanups.push(() => store.close());
  const ipfs = await createPostgresBackend({ db: store.db, dataDir: await tempDir(), ...options });
  return { ipfs, store };
}

ipfsBackendContract('postgres blockstore', async () => (await instance(await fleetSchema())).ipfs);

test('postgres: a file and a tree added through one instance are read whole through another, with Kubo\'s CIDs', async () => {
  const url = await fleetSchema();
  const [a, b] = [await instance(url), await instance(url)];
  const data = deterministicBytes(3 * 262_144 + 17, 'fleet-file');
  const { cid } = await a.ipfs.addEntries(entries(file('f.bin', data)), defaultAddOptions());
  assert.deepEqual(await bytes(b.ipfs.cat(cid)), data);
  assert.deepEqual(await b.ipfs.stat(cid), { cid, type: 'file', size: data.length });

  const tree = await a.ipfs.addEntries(entries(file('planets/mars.txt', 'Hello Mars!\n'), file('planets/venus.txt', 'Hello Venus!\n')), defaultAddOptions());
  assert.equal(tree.cid, 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY'); // Kubo
  assert.equal(new TextDecoder().decode(await bytes(b.ipfs.cat(tree.cid, 'venus.txt'))), 'Hello Venus!\n');
  // The instances have peer ids of their own (each its DATA_DIR's key).
  assert.notEqual(await a.ipfs.id(), await b.ipfs.id());
  const pins = await b.store.db.selectFrom('ipfs_pins').select('cid').orderBy('cid').execute();
  assert.deepEqual(pins.map((p) => p.cid), [cid, tree.cid].sort());
});

test('postgres: each block is written once, whoever adds it and however often it repeats in a file', async () => {
  const url = await fleetSchema();
  const [a, b] = [await instance(url), await instance(url)];
  // 2 MiB of zeros: eight identical leaves and one parent, plus the directory the importer wraps a
  // named file in: three distinct blocks.
  const zeros = new Uint8Array(8 * 262_144);
  const first = await a.ipfs.addEntries(entries(file('z', zeros)), defaultAddOptions());
  const again = await b.ipfs.addEntries(entries(file('z', zeros)), defaultAddOptions());
  assert.equal(again.cid, first.cid);
  const count = await a.store.db.selectFrom('ipfs_blocks').select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 3);
  assert.equal((await bytes(b.ipfs.cat(first.cid))).length, zeros.length);
});

test('postgres: an add that fails midway pins nothing and leaves no root to read', async () => {
  const url = await fleetSchema();
  const { ipfs, store } = await instance(url);
  const seed = 'half-an-add';
  const size = 4 * 1024 * 1024;
  const { cid } = await ipfs.addEntries(entries({ kind: 'file', path: 'f', content: deterministicStream(size, seed) }), defaultAddOptions({ onlyHash: true }));
  async function* failing(): AsyncGenerator<Uint8Array> {
    let sent = 0;
    for await (const chunk of deterministicStream(size, seed)) {
      if (sent >= size / 2) throw new Error('the client went away');
      sent += chunk.length;
      yield chunk;
    }
  }
  await assert.rejects(ipfs.addEntries(entries({ kind: 'file', path: 'f', content: failing() }), defaultAddOptions()), /client went away/);
  assert.ok((await store.db.selectFrom('ipfs_blocks').select('multihash').execute()).length > 0, 'leaves were written');
  assert.deepEqual(await store.db.selectFrom('ipfs_pins').selectAll().execute(), []);
  await assertCode(ipfs.stat(cid), 'request.not_found');
});

test('postgres: reads through a block cache smaller than the file are exact, again and again', async () => {
  const url = await fleetSchema();
  const { ipfs } = await instance(url, { cacheBytes: 600 * 1024 });
  const data = deterministicBytes(10 * 262_144, 'cache-bound');
  const { cid } = await ipfs.addEntries(entries(file('f', data)), defaultAddOptions());
  const digest = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
  for (let round = 0; round < 2; round += 1) assert.equal(digest(await bytes(ipfs.cat(cid))), digest(data));
});

test('postgres: PostgreSQL restarted in the middle of a read answers store.unavailable, then reads work again', { skip: privatePostgresMissing() }, async () => {
  const postgres = await startPrivatePostgres();
  cleanups.push(async () => postgres.stop());
  const [a, b] = [await instance(postgres.url, { cacheBytes: 0 }), await instance(postgres.url, { cacheBytes: 0 })];
  // 10 MiB: the reader is given 4 MiB windows, so most of the file is still to be fetched after its first bytes.
  const data = deterministicBytes(40 * 262_144, 'restart-mid-read');
  const { cid } = await a.ipfs.addEntries(entries(file('f', data)), defaultAddOptions());

  const reading = b.ipfs.cat(cid)[Symbol.asyncIterator]();
  assert.equal((await reading.next()).done, false);
  // restart() stops the server before it returns, then starts it again after the pause.
  const restarted = postgres.restart(5000);
  let failure: unknown;
  try {
    for (let next = await reading.next(); !next.done; next = await reading.next());
  } catch (error) {
    failure = error;
  }
  assert.ok(failure, 'the read in flight ended with an error, not with a short file');
  await assertCode(Promise.reject(failure), 'store.unavailable');
  await restarted;
  // Every pooled connection went with the old server: the next reads open new ones.
  assert.deepEqual(await bytes(b.ipfs.cat(cid)), data);
  const offset = 262_144 * 20 + 5;
  assert.deepEqual(await bytes(a.ipfs.cat(cid, undefined, { offset, length: 1000 })), data.subarray(offset, offset + 1000));
});
