import { tmpdir } from 'node:os';
import { createPostgresBackend } from '../../src/ipfs/postgres-backend.ts';
import { openStore } from '../../src/store/db.ts';
import { buildTestApp } from './ipfs-http.ts';

/**
 * Test support for ipfs-streaming.test.ts: the IPFS API in a process of its own (started with
 * --expose-gc), so the test measures the server's memory alone. Sends `{port}` once listening.
 * On `'start'` it samples RSS every 10 ms (`peak`: what the OS sees, uncollected garbage
 * included) and, every 250 ms right after a full GC, the live JS heap + ArrayBuffers
 * (`livePeak`: what the upload really holds); `'memory'` answers `{baseline, peak,
 * liveBaseline, livePeak}` in bytes; `'stop'` exits.
 */
const collectGarbage = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
// IPFS_STREAM_DATABASE_URL: the fleet's blockstore in that PostgreSQL (IPFS_BLOCKSTORE=postgres), a
// store of this process' own, as a server instance holds.
const databaseUrl = process.env.IPFS_STREAM_DATABASE_URL;
const store = databaseUrl ? await openStore({ databaseUrl, dataDir: tmpdir() }) : undefined;
const app = await buildTestApp({}, store ? (dataDir) => createPostgresBackend({ db: store.db, dataDir }) : undefined);
await app.app.listen({ port: 0, host: '127.0.0.1' });
const address = app.app.server.address();
let baseline = 0;
let peak = 0;
let liveBaseline = 0;
let livePeak = 0;
function live(): number {
  collectGarbage();
  const memory = process.memoryUsage();
  return memory.heapUsed + memory.arrayBuffers;
}
const timers: NodeJS.Timeout[] = [];
process.on('message', async (message) => {
  if (message === 'start') {
    liveBaseline = livePeak = live();
    baseline = peak = process.memoryUsage().rss;
    timers.push(setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 10));
    timers.push(
      setInterval(() => (livePeak = Math.max(livePeak, live())), 250),
    );
  } else if (message === 'memory') {
    for (const timer of timers.splice(0)) clearInterval(timer);
    process.send?.({ baseline, peak, liveBaseline, livePeak });
  } else if (message === 'stop') {
    await app.close();
    await store?.close();
    process.exit(0);
  }
});
process.send?.({ port: typeof address === 'object' && address ? address.port : 0 });
