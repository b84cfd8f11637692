// `npm run bench` (`-- --quick` for a shorter pass): every figure beside a baseline measured in the
// same run on this machine, each the median of several runs with its min and max. Bounded in count
// and time, loopback only. Writes bench/results/<date>.json and its chart (bench/chart.ts).
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { readFileSync } from 'node:fs';
import { anvilBinaryPath } from '../src/chain/anvil-process.ts';
import { erc20Burst, startBareChain } from './bare-chain.ts';
import { startBenchPlatform } from './bench-platform.ts';
import { measureChainHistory } from './chain-history.ts';
import { writeChart } from './chart.ts';
import { startLoadClient } from './load-client.ts';
import { format, ratio, repeat, spread } from './measure.ts';
import { paymentBurst, paymentPairs, summarisePayments } from './payments.ts';
import { measureRequestRate, requestProbes } from './request-rate.ts';
import { fundedSenders, summariseLevel, transferBurst, type TransferBurst } from './token-transfers.ts';
import { benchIpfsUpload } from './ipfs-upload.ts';

const quick = process.argv.includes('--quick');
const plan = quick
  ? { runs: 3, levels: [1, 10, 100, 200], windowMs: 2_000, maxTotal: 1_000, requestWindowMs: 1_000, burst: 100, historyTarget: 50_000, historyBudgetMs: 20_000, chunk: 250 }
  : { runs: 3, levels: [1, 10, 100, 200], windowMs: 6_000, maxTotal: 3_000, requestWindowMs: 3_000, burst: 200, historyTarget: 50_000, historyBudgetMs: 120_000, chunk: 500 };
const maxLevel = Math.max(...plan.levels);
const began = Date.now();
const log = (message: string) => console.log(`[${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${message}`);
const load1 = () => Number(os.loadavg()[0]!.toFixed(2));

function hardware() {
  const cpuModel = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? os.cpus()[0]?.model ?? 'unknown';
  const git = (...args: string[]) => { try { return execFileSync('git', args, { encoding: 'utf8' }).trim(); } catch { return ''; } };
  return {
    nproc: Number(execFileSync('nproc', { encoding: 'utf8' }).trim()),
    cpuModel,
    memoryGiB: Number((os.totalmem() / 2 ** 30).toFixed(1)),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    anvil: execFileSync(anvilBinaryPath(), ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim(),
    commit: git('rev-parse', '--short', 'HEAD'),
    /** Others' uncommitted changes under src/ were part of what ran. */
    srcModified: git('status', '--porcelain', '--', 'src').length > 0,
  };
}

// 1. The baseline: a fresh bare anvil per run, one ERC-20 transaction per transfer.
log(`bare anvil: ${plan.burst} transfers from ${plan.burst} EOAs, ${plan.runs} fresh chains`);
const anvilRuns = await repeat(plan.runs, async () => {
  const chain = await startBareChain();
  try { return (await erc20Burst(chain, plan.burst)).perSecond; } finally { await chain.stop(); }
});
const anvilErc20 = spread(anvilRuns);
log(`bare anvil: ${format(anvilErc20, '/s')}`);

// 2. Token API transfers, then request rates, on one platform; the load from a process of its own.
const load = await startLoadClient();
const tokenPlatform = await startBenchPlatform();
const loadBefore = load1();
let tokenTransfers, requests;
try {
  log(`token API: funding ${maxLevel} custodial accounts`);
  const { senders, recipient } = await fundedSenders(tokenPlatform, maxLevel);
  const bursts = new Map<number, TransferBurst[]>(plan.levels.map((level) => [level, []]));
  for (let run = 0; run < plan.runs; run++) {
    for (const level of plan.levels) {
      const burst = await transferBurst(tokenPlatform, load, senders.slice(0, level), recipient, plan);
      bursts.get(level)!.push(burst);
      log(`token API run ${run + 1}, ${level} senders: ${burst.perSecond.toFixed(1)}/s p50 ${burst.p50.toFixed(0)} ms p99 ${burst.p99.toFixed(0)} ms, ${burst.completed} ok ${burst.failed} failed`);
    }
  }
  tokenTransfers = plan.levels.map((level) => {
    const summary = summariseLevel(level, bursts.get(level)!);
    return { ...summary, vsBareAnvil: ratio(summary.transfersPerSecond, anvilErc20) };
  });
  requests = [];
  for (const probe of await requestProbes(tokenPlatform)) {
    requests.push(await measureRequestRate(tokenPlatform, load, probe, { runs: plan.runs, concurrency: 32, windowMs: plan.requestWindowMs, maxTotal: 100_000 }));
    log(`${probe.name}: ${format(requests.at(-1)!.platform, '/s')} vs bare Fastify ${format(requests.at(-1)!.bareFastify, '/s')}`);
  }
} finally {
  await tokenPlatform.stop();
  await load.stop();
}

// 3. gRPC payments.
const paymentPlatform = await startBenchPlatform({ grpc: true });
let payments;
try {
  log(`payments: ${maxLevel} users and stores`);
  const pairs = await paymentPairs(paymentPlatform, maxLevel);
  const bursts = new Map<number, Awaited<ReturnType<typeof paymentBurst>>[]>(plan.levels.map((level) => [level, []]));
  for (let run = 0; run < plan.runs; run++) {
    for (const level of plan.levels) {
      const burst = await paymentBurst(paymentPlatform, pairs.slice(0, level), plan);
      bursts.get(level)!.push(burst);
      log(`payments run ${run + 1}, ${level} pairs: ${burst.perSecond.toFixed(1)}/s p50 ${burst.p50.toFixed(0)} ms p99 ${burst.p99.toFixed(0)} ms, ${burst.completed} ok ${burst.failed} failed`);
    }
  }
  payments = plan.levels.map((level) => {
    const summary = summarisePayments(level, bursts.get(level)!);
    return { ...summary, vsBareAnvil: ratio(summary.paymentsPerSecond, anvilErc20) };
  });
} finally {
  await paymentPlatform.stop();
}

// 4. The chain as its history grows: the platform's anvil settings, then a bare anvil to the same count.
log(`chain history, platform settings: up to ${plan.historyTarget} transactions or ${plan.historyBudgetMs / 1000} s`);
const history = { burst: plan.burst, chunk: plan.chunk, probes: plan.runs };
const platformSettings = await measureChainHistory({ platformSettings: true, target: plan.historyTarget, budgetMs: plan.historyBudgetMs, chunkSize: plan.chunk, burst: plan.burst, probes: plan.runs });
log(`  ${platformSettings.transactions} transactions: ${format(platformSettings.after, '/s')} vs fresh ${format(platformSettings.fresh, '/s')}`);
const bareAnvil = await measureChainHistory({ platformSettings: false, target: platformSettings.transactions, budgetMs: plan.historyBudgetMs, chunkSize: plan.chunk, burst: plan.burst, probes: plan.runs });
log(`  bare, ${bareAnvil.transactions} transactions: ${format(bareAnvil.after, '/s')} vs fresh ${format(bareAnvil.fresh, '/s')}`);

const ipfsUpload = process.argv.includes('--ipfs') ? await benchIpfsUpload() : undefined;

const date = new Date().toISOString().slice(0, 10);
const results = {
  date, mode: quick ? 'quick' : 'full', durationSeconds: Math.round((Date.now() - began) / 1000),
  hardware: hardware(), loadAverageAtStart: loadBefore, loadAverageAtEnd: load1(),
  baseline: { anvilErc20: { transfersPerEoaBurst: plan.burst, transfersPerSecond: anvilErc20 } },
  tokenTransfers: { windowMs: plan.windowMs, levels: tokenTransfers },
  payments: { windowMs: plan.windowMs, levels: payments },
  requests: { concurrency: 32, windowMs: plan.requestWindowMs, probes: requests },
  chainHistory: { ...history, platformSettings, bareAnvil, platformVsBareAfter: ratio(platformSettings.after, bareAnvil.after) },
  ...(ipfsUpload && { ipfsUpload }),
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const jsonFile = new URL(`./results/${quick ? 'quick-' : ''}${date}.json`, import.meta.url);
writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
const chartFile = writeChart(jsonFile.pathname);

const row = (figure: string, measured: string, baseline: string, r: number | string) => console.log(`${figure.padEnd(40)} ${measured.padEnd(34)} ${baseline.padEnd(34)} ${r}`);
console.log('');
row('figure (median [min–max])', 'measured', 'baseline', 'ratio');
for (const l of results.tokenTransfers.levels) row(`token API, ${l.senders} senders`, `${format(l.transfersPerSecond, '/s')} p50 ${l.p50Ms.median} p99 ${l.p99Ms.median} ms`, `bare anvil ${format(anvilErc20, '/s')}`, `${l.vsBareAnvil}x`);
for (const l of results.payments.levels) row(`gRPC payments, ${l.pairs} pairs`, `${format(l.paymentsPerSecond, '/s')} p50 ${l.p50Ms.median} p99 ${l.p99Ms.median} ms`, `bare anvil ${format(anvilErc20, '/s')}`, `${l.vsBareAnvil}x`);
for (const r of results.requests.probes) row(r.request, format(r.platform, '/s'), `bare Fastify ${format(r.bareFastify, '/s')}`, `${r.ratio}x`);
for (const [name, h] of [['platform anvil settings', platformSettings], ['bare anvil', bareAnvil]] as const) {
  row(`chain after ${h.transactions} tx (${name})`, format(h.after, '/s'), `fresh ${format(h.fresh, '/s')}`, `${h.afterVsFresh}x`);
}
const rss = results.tokenTransfers.levels.at(-1)!;
row(`server RSS growth, ${rss.senders}-sender burst`, format(rss.serverRssGrowthMiB, ' MiB'), '', '');
console.log(`\n${jsonFile.pathname}\n${chartFile}\n${results.durationSeconds} s`);
