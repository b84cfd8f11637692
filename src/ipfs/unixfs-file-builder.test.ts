import assert from 'node:assert/strict';
import { test } from 'node:test';
import { importer, type ImporterOptions } from 'ipfs-unixfs-importer';
import { deterministicStream } from '../../test/support/deterministic-bytes.ts';
import { varint } from './unixfs-file-builder.ts';
import { kuboImporterOptions } from './unixfs-profile.ts';

const discard = { put: async (cid: unknown) => cid };
const chunk = 262_144;

async function rootOf(size: number, options: ImporterOptions): Promise<string> {
  let last = '';
  for await (const entry of importer([{ content: deterministicStream(size, `builder-${size}`) }], discard as never, options)) last = entry.cid.toString();
  return last;
}

test('kuboFileBuilder builds exactly what the stock file builder builds below 2 GiB', { timeout: 120_000 }, async () => {
  const sizes = [0, 1, chunk, chunk + 1, 3 * chunk + 7, 174 * chunk, 2 * 174 * chunk + 5];
  for (const profile of [{ cidVersion: 0, rawLeaves: false }, { cidVersion: 0, rawLeaves: true }, { cidVersion: 1, rawLeaves: true }, { cidVersion: 1, rawLeaves: false }] as const) {
    const ours = kuboImporterOptions(profile);
    const { fileBuilder: _, ...stock } = ours;
    for (const size of sizes) {
      assert.equal(await rootOf(size, ours), await rootOf(size, stock), `size ${size}, ${JSON.stringify(profile)}`);
    }
  }
});

test('varint encodes every size exactly, across 2^31 and 2^32', () => {
  assert.deepEqual(varint(0n), [0]);
  assert.deepEqual(varint(127n), [0x7f]);
  assert.deepEqual(varint(128n), [0x80, 0x01]);
  assert.deepEqual(varint(2n ** 31n), [0x80, 0x80, 0x80, 0x80, 0x08]);
  assert.deepEqual(varint(2n ** 32n + 1n), [0x81, 0x80, 0x80, 0x80, 0x10]);
  assert.deepEqual(varint(64n * 2n ** 30n), [0x80, 0x80, 0x80, 0x80, 0x80, 0x02]);
});
