import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { exporter } from 'ipfs-unixfs-exporter';
import { importer, type ImportCandidate, type ImporterOptions } from 'ipfs-unixfs-importer';
import { deterministicBytes, deterministicStream } from '../../test/support/deterministic-bytes.ts';
import { kuboImporterOptions } from './unixfs-profile.ts';

/**
 * The CID profile against answers published by Kubo's own test suites:
 * test/cli/cid_profiles_test.go (profile unixfs-v0-2015 = Kubo's default; data from
 * `DeterministicRandomReader`, reproduced by test/support/deterministic-bytes.ts) and
 * test/sharness/t0040-add-and-cat.sh. Nothing here was computed by us.
 */
const blocks = new Map<string, Uint8Array>();
const memoryStore = {
  put: async (cid: { toString(): string }, bytes: Uint8Array) => (blocks.set(cid.toString(), bytes), cid),
  get: async function* (cid: { toString(): string }) {
    const bytes = blocks.get(cid.toString());
    if (!bytes) throw Object.assign(new Error(`no block ${cid}`), { name: 'NotFoundError' });
    yield bytes;
  },
};

async function rootCid(candidates: ImportCandidate[] | AsyncIterable<ImportCandidate>, options: Partial<ImporterOptions> = {}): Promise<string> {
  let last: string | undefined;
  for await (const entry of importer(candidates, memoryStore as never, { ...kuboImporterOptions({ cidVersion: 0, rawLeaves: false }), ...options })) last = entry.cid.toString();
  return last as string;
}

const text = (s: string) => new TextEncoder().encode(s);
const chunk = 262_144;

/** Kubo's `createDirectoryForHAMTLinksEstimation`: names from the seed's stream, content "x". */
function hamtDirectory(count: number, nameLength: number, seed: string): ImportCandidate[] {
  const alphabet = 'abcdefghijklmnopqrstuvwxyz01234567890-_';
  const stream = deterministicBytes(1024 * 1024, seed);
  return Array.from({ length: count }, (_, index) => {
    let name = '';
    for (let j = 0; j < nameLength; j++) name += alphabet[(stream[index * nameLength + j] ?? 0) % alphabet.length];
    return { path: `dir/${name}`, content: text('x') };
  });
}

describe('Kubo known answers (default profile unixfs-v0-2015)', () => {
  test('small files', async () => {
    assert.equal(await rootCid([{ content: new Uint8Array(0) }]), 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH');
    assert.equal(await rootCid([{ content: text('hello world') }]), 'Qmf412jQZiuVUtdgnB36FXFX7xg5V6KEbSJ4dpQuhkLyfD');
    assert.equal(await rootCid([{ content: text('Hello Worlds!\n') }]), 'QmVr26fY1tKyspEJBniVhqxQeEjhF78XerGiqWAwraVLQH');
    assert.equal(await rootCid([{ content: text('IPFS\n') }]), 'QmdFyxZXsFiP4csgfM5uPu99AvFiKH62CSPDw5TP92nr7w');
    assert.equal(await rootCid([{ content: new Uint8Array(0) }], { cidVersion: 0, rawLeaves: true }), 'bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku');
  });

  test('one chunk exactly, and one byte more (two leaves)', async () => {
    assert.equal(await rootCid([{ content: deterministicBytes(chunk, 'chunk-v0-seed') }]), 'QmWmRj3dFDZdb6ABvbmKhEL6TmPbAfBZ1t5BxsEyJrcZhE');
    assert.equal(await rootCid([{ content: deterministicBytes(chunk + 1, 'chunk-v0-seed') }]), 'QmYyLxtzZyW22zpoVAtKANLRHpDjZtNeDjQdJrcQNWoRkJ');
  });

  test('174 leaves under one node, and one byte more (a second level)', { timeout: 120_000 }, async () => {
    assert.equal(await rootCid([{ content: deterministicStream(174 * chunk, 'v0-seed') }]), 'QmUbBALi174SnogsUzLpYbD4xPiBSFANF4iztWCsHbMKh2');
    assert.equal(await rootCid([{ content: deterministicStream(174 * chunk + 1, 'v0-seed') }]), 'QmV81WL765sC8DXsRhE5fJv2rwhS4icHRaf3J9Zk5FdRnW');
  });

  test('directories: `ipfs add -r` trees and the HAMT threshold (links-bytes)', { timeout: 120_000 }, async () => {
    const tree = [
      { path: 'test_current_dir/hello/world', content: text('World\n') },
      { path: 'test_current_dir/hey', content: text('Hey\n') },
    ];
    assert.equal(await rootCid(tree), 'QmZQWnfcqJ6hNkkPvrY9Q5X39GP3jUnUbAV4AbmbbR3Cb1');
    assert.equal(await rootCid(hamtDirectory(4096, 30, 'hamt-unixfs-v0-2015')), 'QmX5GtRk3TSSEHtdrykgqm4eqMEn3n2XhfkFAis5fjyZmN');
    assert.equal(await rootCid(hamtDirectory(4033, 31, 'hamt-unixfs-v0-2015')), 'QmeMiJzmhpJAUgynAcxTQYek5PPKgdv3qEvFsdV3XpVnvP');
  });
});

describe('files over 2 GiB (a protons-runtime uint64 bug corrupts them in the stock file builder)', () => {
  test('a 2 GiB + 1 MiB file gets one stable root that reads back its exact size', { timeout: 240_000 }, async () => {
    const size = 2 * 1024 ** 3 + 1024 ** 2;
    const zeros = new Uint8Array(4 * 1024 * 1024);
    async function* content(): AsyncGenerator<Uint8Array> {
      for (let sent = 0; sent < size; sent += zeros.length) yield zeros.subarray(0, Math.min(zeros.length, size - sent));
    }
    // All-zero leaves are one block, so the whole DAG fits in the in-memory store.
    const first = await rootCid([{ content: content() }]);
    const second = await rootCid([{ content: content() }]);
    assert.equal(second, first);
    const entry = await exporter(first, memoryStore as never);
    assert.equal(entry.type, 'file');
    assert.equal(entry.size, BigInt(size));
    let tail = 0;
    if (entry.type === 'file') for await (const bytes of entry.content({ offset: size - 1000 })) tail += bytes.length;
    assert.equal(tail, 1000);
  });
});
