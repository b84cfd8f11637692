import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DomainError } from '../../src/shared/errors.ts';
import { deterministicBytes, deterministicRange, deterministicStream } from './deterministic-bytes.ts';
import { defaultAddOptions, type AddEntry, type AddOptions, type IpfsBackend } from '../../src/ipfs/ipfs-backend.ts';

/**
 * The behaviour every IpfsBackend must share, run against the embedded backend always and
 * against Kubo when IPFS_API_URL answers. Expected CIDs marked "Kubo" come from Kubo's own test
 * suites (test/sharness/t0040-add-and-cat.sh, test/cli/cid_profiles_test.go); the rest are
 * noted as computed.
 *
 * `open` returns the backend, or a string saying why the suite is skipped.
 */
export function ipfsBackendContract(name: string, open: () => Promise<IpfsBackend | string>): void {
  let backend: IpfsBackend | undefined;
  let skip: string | undefined;

  describe(`IpfsBackend contract: ${name}`, () => {
    before(async () => {
      const opened = await open();
      if (typeof opened === 'string') skip = opened;
      else backend = opened;
    });
    after(async () => backend?.close());

    function it(title: string, body: (ipfs: IpfsBackend) => Promise<void>, options: { timeout?: number } = {}): void {
      test(title, options, async (t) => {
        if (!backend) return void t.skip(skip ?? 'backend not opened');
        await body(backend);
      });
    }

    it('adds a small file with the CID Kubo gives it and reads it back', async (ipfs) => {
      const { cid } = await ipfs.addEntries(entries(file('hello.txt', 'hello world\n')), defaultAddOptions());
      assert.equal(cid, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o'); // Kubo
      assert.equal(text(await bytes(ipfs.cat(cid))), 'hello world\n');
      assert.deepEqual(await ipfs.stat(cid), { cid, type: 'file', size: 12 });
    });

    it('adds an empty file and an empty directory', async (ipfs) => {
      assert.equal((await ipfs.addEntries(entries(file('empty', '')), defaultAddOptions())).cid, 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH'); // Kubo
      const dir = await ipfs.addEntries(entries({ kind: 'directory', path: 'emptyDir' }), defaultAddOptions());
      assert.equal(dir.cid, 'QmUNLLsPACCz1vLxQVkXqqLX5R1X345qqfHbsf67hvA3Nn'); // Kubo
      assert.deepEqual(await all(ipfs.ls(dir.cid)), []);
    });

    it('chunks 256 KiB + 1 bytes into two leaves like Kubo and reads any range', async (ipfs) => {
      const data = deterministicBytes(262_145, 'chunk-v0-seed');
      const { cid } = await ipfs.addEntries(entries(file('f', data)), defaultAddOptions());
      assert.equal(cid, 'QmYyLxtzZyW22zpoVAtKANLRHpDjZtNeDjQdJrcQNWoRkJ'); // Kubo
      const middle = await bytes(ipfs.cat(cid, undefined, { offset: 262_100, length: 45 }));
      assert.deepEqual(middle, data.subarray(262_100));
      assert.deepEqual(await bytes(ipfs.cat(cid, undefined, { offset: 10, length: 0 })), new Uint8Array(0));
    });

    it('adds a directory tree given depth-first, directories implied or explicit', async (ipfs) => {
      const implied = await ipfs.addEntries(entries(...planets()), defaultAddOptions());
      assert.equal(implied.cid, 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY'); // Kubo
      const explicit = await ipfs.addEntries(entries({ kind: 'directory', path: 'planets' }, ...planets()), defaultAddOptions());
      assert.equal(explicit.cid, implied.cid);
      const listing = await all(ipfs.ls(implied.cid));
      assert.deepEqual(listing, [
        { name: 'mars.txt', cid: 'QmPrrHqJzto9m7SyiRzarwkqPcCSsKR2EB1AyqJfe8L8tN', type: 'file', size: 12 }, // Kubo
        { name: 'venus.txt', cid: 'QmU5kp3BH3B8tnWUU2Pikdb2maksBNkb92FHRr56hyghh4', type: 'file', size: 13 }, // Kubo
      ]);
      assert.equal(text(await bytes(ipfs.cat(implied.cid, 'venus.txt'))), 'Hello Venus!\n');
      assert.deepEqual(await ipfs.stat(implied.cid), { cid: implied.cid, type: 'directory', size: 0 });
    });

    it('adds nested directories like `ipfs add -r`', async (ipfs) => {
      const moons = entries(
        file('moons/jupiter/europa.txt', 'Hello Europa!\n'),
        file('moons/mercury.txt', 'hey youre no moon!\n'),
        file('moons/saturn/titan.txt', 'Hello Titan!\n'),
      );
      const { cid } = await ipfs.addEntries(moons, defaultAddOptions());
      assert.equal(cid, 'QmVKvomp91nMih5j6hYBA8KjbiaYvEetU2Q7KvtZkLe9nQ'); // Kubo
      assert.equal((await ipfs.stat(cid, 'jupiter')).cid, 'QmS5mZddhFPLWFX3w6FzAy9QxyYkaxvUpsWCtZ3r7jub9J'); // Kubo
    });

    it('follows Kubo for cid-version and raw-leaves', async (ipfs) => {
      const add = async (options: Partial<AddOptions>) => (await ipfs.addEntries(entries(...planets()), defaultAddOptions(options))).cid;
      assert.equal(await add({ rawLeaves: true }), 'QmfWfQfKCY5Ukv9peBbxM5vqWM9BzmqUSXvdCgjT2wsiBT'); // Kubo --raw-leaves
      assert.equal(await add({ cidVersion: 1 }), 'bafybeih7e5dmkyk25up5vxug4q3hrg2fxbzf23dfrac2fns5h7z4aa7ioi'); // Kubo --cid-version=1
      assert.equal(await add({ cidVersion: 1, rawLeaves: false }), 'bafybeif5tuep5ap2d7zyhbktucey75aoacxufgt6i3v4gebmixyipnyp7y'); // Kubo
      const small = await ipfs.addEntries(entries(file('a', 'hello world')), defaultAddOptions({ cidVersion: 1 }));
      assert.equal(small.cid, 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e'); // Kubo (raw leaf)
      assert.equal(text(await bytes(ipfs.cat(small.cid))), 'hello world');
    });

    it('wraps several top-level entries, or one when asked', async (ipfs) => {
      const two = await ipfs.addEntries(entries(file('mars.txt', 'Hello Mars!\n'), file('venus.txt', 'Hello Venus!\n')), defaultAddOptions());
      // The wrapper holds what `planets` holds, so it has the planets CID.
      assert.equal(two.cid, 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY');
      const one = await ipfs.addEntries(entries(file('hello.txt', 'Hello Worlds!\n')), defaultAddOptions({ wrapWithDirectory: true }));
      assert.equal(one.cid, 'QmVJfrqd4ogGZME6LWkkikAGddYgh9dBs2U14DHZZUBk7W'); // computed
      assert.deepEqual((await all(ipfs.ls(one.cid))).map((e) => [e.name, e.cid]), [['hello.txt', 'QmVr26fY1tKyspEJBniVhqxQeEjhF78XerGiqWAwraVLQH']]); // Kubo
    });

    it('only-hash computes the CID and stores nothing', async (ipfs) => {
      const content = `only-hash ${Date.now()} ${Math.random()}`;
      const { cid } = await ipfs.addEntries(entries(file('x', content)), defaultAddOptions({ onlyHash: true }));
      await assertCode(ipfs.stat(cid), 'request.not_found');
      const stored = await ipfs.addEntries(entries(file('x', content)), defaultAddOptions());
      assert.equal(stored.cid, cid);
    });

    // Reads are offline: an unknown CID is an answer, not a search (the timeout fails a hang).
    it('answers unknown content with not_found, without searching for it', async (ipfs) => {
      const neverAdded = 'QmNLei78zWmzUdbeRB3CiUfAizWUrbeeZh5K1rhAQKCh51';
      await assertCode(ipfs.stat(neverAdded), 'request.not_found');
      await assertCode(bytes(ipfs.cat(neverAdded)), 'request.not_found');
      const { cid } = await ipfs.addEntries(entries(...planets()), defaultAddOptions());
      await assertCode(ipfs.stat(cid, 'pluto.txt'), 'request.not_found');
    }, { timeout: 60_000 });

    it('refuses cat of a directory and ls of a file', async (ipfs) => {
      const { cid } = await ipfs.addEntries(entries(...planets()), defaultAddOptions());
      await assertCode(bytes(ipfs.cat(cid)), 'request.invalid');
      await assertCode(all(ipfs.ls(cid, 'mars.txt')), 'request.invalid');
    });

    it('fails the add when a content stream fails, and stays usable', async (ipfs) => {
      async function* broken(): AsyncGenerator<Uint8Array> {
        yield* deterministicStream(300_000, 'broken');
        throw new DomainError('request.invalid', 'upload cut');
      }
      await assertCode(ipfs.addEntries(entries({ kind: 'file', path: 'b', content: broken() }), defaultAddOptions()), 'request.invalid');
      const { cid } = await ipfs.addEntries(entries(file('hello.txt', 'hello world\n')), defaultAddOptions());
      assert.equal(cid, 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o');
    });

    it('reports a node id and a version', async (ipfs) => {
      assert.match(await ipfs.id(), /^(12D3KooW|Qm)[1-9A-HJ-NP-Za-km-z]+$/);
      assert.ok((await ipfs.version()).length > 0);
    });

    it('reads a range of a multi-chunk file without reading it whole', async (ipfs) => {
      const size = 3 * 262_144 + 1000;
      const { cid } = await ipfs.addEntries(entries({ kind: 'file', path: 'big', content: deterministicStream(size, 'range') }), defaultAddOptions());
      const offset = 262_144 + 12_345;
      const got = await bytes(ipfs.cat(cid, undefined, { offset, length: 300_000 }));
      assert.deepEqual(got, deterministicRange('range', offset, 300_000));
    });
  });
}

export function file(path: string, content: string | Uint8Array): AddEntry {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  return { kind: 'file', path, content: (async function* () { if (bytes.length > 0) yield bytes; })() };
}

export async function* entries(...list: AddEntry[]): AsyncGenerator<AddEntry> {
  yield* list;
}

function planets(): AddEntry[] {
  return [file('planets/mars.txt', 'Hello Mars!\n'), file('planets/venus.txt', 'Hello Venus!\n')];
}

export async function all<T>(source: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of source) items.push(item);
  return items;
}

export async function bytes(source: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(Buffer.concat(await all(source)));
}

function text(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

export async function assertCode(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof DomainError, `expected a DomainError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}
