// `--only=ipfs`: add and cat of one 64 MiB file (BENCH_IPFS_BLOCKSTORE_MIB) through the unixfs backend
// on the file blockstore (DATA_DIR) and on the PostgreSQL blockstore (IPFS_BLOCKSTORE=postgres, a fresh
// schema of the test PostgreSQL), beside `sha256sum` of the same file (the floor: one pass of hashing
// the bytes from the page cache), in the same run; medians of `runs`, each add on an empty store.
import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { createReadStream } from 'node:fs';
import { createEmbeddedBackend } from '../src/ipfs/embedded-backend.ts';
import { createPostgresBackend } from '../src/ipfs/postgres-backend.ts';
import { defaultAddOptions, type IpfsBackend } from '../src/ipfs/ipfs-backend.ts';
import { openStore } from '../src/store/db.ts';
import { deterministicStream } from '../test/support/deterministic-bytes.ts';
import { freshPostgresSchema } from '../test/support/store-factories.ts';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
const round = (value: number) => Number(value.toFixed(2));

export async function measureIpfsBlockstores(options: { runs?: number; mib?: number } = {}): Promise<object> {
  const runs = options.runs ?? 3;
  const mib = options.mib ?? Number(process.env.BENCH_IPFS_BLOCKSTORE_MIB ?? 64);
  const work = await mkdtemp(path.join(tmpdir(), 'vixpay-bench-ipfs-'));
  const file = path.join(work, 'bench.bin');
  await pipeline(Readable.from(deterministicStream(mib * 2 ** 20, 'bench-blockstores', 256 * 1024)), createWriteStream(file));
  const timed = async (run: () => Promise<unknown> | unknown) => {
    const started = performance.now();
    await run();
    return (performance.now() - started) / 1000;
  };
  const addAndCat = async (ipfs: IpfsBackend) => {
    let cid = '';
    const add = await timed(async () => {
      ({ cid } = await ipfs.addEntries((async function* () {
        yield { kind: 'file' as const, path: 'bench.bin', content: createReadStream(file, { highWaterMark: 256 * 1024 }) };
      })(), defaultAddOptions()));
    });
    const cat = await timed(async () => { for await (const chunk of ipfs.cat(cid)) void chunk; });
    return { add, cat };
  };
  try {
    const sha256sum: number[] = [];
    const fileStore: Array<{ add: number; cat: number }> = [];
    const postgres: Array<{ add: number; cat: number }> = [];
    for (let i = 0; i < runs; i += 1) {
      sha256sum.push(await timed(() => execFileSync('sha256sum', [file])));
      const dataDir = await mkdtemp(path.join(work, 'fs-'));
      const embedded = await createEmbeddedBackend({ dataDir });
      fileStore.push(await addAndCat(embedded));
      await embedded.close();
      await rm(dataDir, { recursive: true, force: true });
      const schema = await freshPostgresSchema('vixpay_bench_ipfs');
      const store = await openStore({ databaseUrl: schema.databaseUrl, dataDir: work });
      try {
        postgres.push(await addAndCat(await createPostgresBackend({ db: store.db, dataDir: path.join(work, 'pg') })));
      } finally {
        await store.close();
        await schema.drop();
      }
    }
    const figure = (seconds: number) => ({ seconds: round(seconds), mibPerSecond: round(mib / seconds) });
    const sha = median(sha256sum);
    const of = (list: Array<{ add: number; cat: number }>) => ({
      add: figure(median(list.map((r) => r.add))), cat: figure(median(list.map((r) => r.cat))),
      addVsSha256sum: round(median(list.map((r) => r.add)) / sha), catVsSha256sum: round(median(list.map((r) => r.cat)) / sha),
    });
    return { fileMiB: mib, runs, sha256sum: figure(sha), fileBlockstore: of(fileStore), postgresBlockstore: of(postgres) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await measureIpfsBlockstores(), null, 2));
