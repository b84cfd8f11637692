// `net_getTempKey` and `getBlock` requests/s on the platform against a bare Fastify handler answering
// the same bytes (captured from the platform), both in this process, loaded by the same client from
// its own process: what our code costs above Fastify's floor.
import Fastify from 'fastify';
import type { BenchPlatform } from './bench-platform.ts';
import type { LoadClient } from './load-client.ts';
import { ratio, spread, type Spread } from './measure.ts';

export interface RequestRate {
  request: string;
  platform: Spread;
  bareFastify: Spread;
  ratio: number;
  bytes: number;
}

interface Probe { name: string; path: string; body: string }

/** The two requests: a temp key for a custodial account, and an old (immutable) block. */
export async function requestProbes(bench: BenchPlatform): Promise<Probe[]> {
  const { address } = await bench.platform.wallet.createAddress();
  return [
    { name: 'net_getTempKey', path: '/token', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'net_getTempKey', params: { address, keyType: 'transfer' } }) },
    { name: 'getBlock', path: '/block', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBlock', params: [1] }) },
  ];
}

export async function measureRequestRate(bench: BenchPlatform, load: LoadClient, probe: Probe, options: { runs: number; concurrency: number; windowMs: number; maxTotal: number }): Promise<RequestRate> {
  const url = `${bench.baseUrl}${probe.path}`;
  const sample = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: probe.body });
  const bytes = Buffer.from(await sample.arrayBuffer());
  const contentType = sample.headers.get('content-type') ?? 'application/json';
  if (sample.status !== 200) throw new Error(`${probe.name}: HTTP ${sample.status} ${bytes.toString()}`);

  const bare = Fastify({ logger: false });
  bare.post(probe.path, async (_request, reply) => reply.type(contentType).send(bytes));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}${probe.path}`;
  try {
    // Every answer must be as long as the sample (a temp key differs only in its random hex), so an
    // error answered 200 (a JSON-RPC error) is counted as failed, not as a fast request.
    const job = (target: string) => load.run({ kind: 'requests', url: target, body: probe.body, expectedBytes: bytes.length, ...options }).then((r) => {
      if (r.failed > 0) throw new Error(`${probe.name} at ${target}: ${r.failed} failed (${r.firstError})`);
      return r.completed / (r.elapsedMs / 1000);
    });
    const platform: number[] = [];
    const bareRuns: number[] = [];
    // Interleaved, so that a noisy neighbour weighs on both alike.
    for (let run = 0; run < options.runs; run++) {
      platform.push(await job(url));
      bareRuns.push(await job(bareUrl));
    }
    const measured = spread(platform, 0);
    const baseline = spread(bareRuns, 0);
    return { request: probe.name, platform: measured, bareFastify: baseline, ratio: ratio(measured, baseline), bytes: bytes.length };
  } finally {
    await bare.close();
  }
}
