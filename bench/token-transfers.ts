// Throughput and latency of the token API's transfers on the embedded default, measured on a real
// platform (SQLite, anvil). Bounded in count and time; loopback only.
import { performance } from 'node:perf_hooks';
import { startTestPlatform, call } from '../test/support/platform.ts';
import { prepareTransfer } from '../test/support/transfer-scheme.ts';

export async function benchTokenTransfers(count = Number(process.env.BENCH_TRANSFERS ?? 100)): Promise<object> {
const t = await startTestPlatform();
try {
  const senders = [];
  for (let i = 0; i < count; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData);
  const recipient = (await call(t.app, '/token', 'createAddress', {})).resultData.address;
  await Promise.all(senders.map((s) => t.platform.wallet.mint('ethereum', { to: s.address, amount: '10' })));
  const prepared = await Promise.all(senders.map((s) => prepareTransfer(t.app, s, recipient, '1')));

  const latencies: number[] = [];
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const results = await Promise.all(prepared.map(async ({ data: _d, ...params }) => {
    const begin = performance.now();
    const result = await call(t.app, '/token', 'transfer', params);
    latencies.push(performance.now() - begin);
    return result.resultCode;
  }));
  const elapsed = performance.now() - started;
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => Number(latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!.toFixed(1));
  const blockStart = performance.now();
  for (let i = 0; i < 200; i++) await call(t.app, '/block', 'getBlock', []);
  const blockMs = (performance.now() - blockStart) / 200;
  return {
    concurrentTransfers: count,
    succeeded: results.filter((c) => c === '200').length,
    totalMs: Math.round(elapsed),
    transfersPerSecond: Number((count / (elapsed / 1000)).toFixed(1)),
    latencyMs: { p50: pct(50), p95: pct(95), max: pct(100) },
    getBlockMeanMs: Number(blockMs.toFixed(2)),
    rssGrowthMiB: Number(((process.memoryUsage().rss - rssBefore) / 2 ** 20).toFixed(1)),
  };
} finally {
  await t.stop();
}
}
