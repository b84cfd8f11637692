// `npm run bench` (`-- --quick` for a shorter pass): every figure beside a baseline measured in the
// same run on this machine, each the median of several runs with its min and max. Bounded in count
// and time, loopback only. Writes bench/results/<date>.json and its chart (bench/chart.ts).
// `-- --only=<section>,...` runs only those sections (and the bare-anvil baseline when token-api or
// payments is among them) and writes bench/results/[quick-]partial-<date>.json instead; `requests`
// is the request rates alone (token-api includes them).
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
import { paymentPairs, paymentTargetOf, summarisePayments, type PaymentBurst } from './payments.ts';
import { measureRequestRate, requestProbes } from './request-rate.ts';
import { fundedSenders, summariseLevel, transferBurst, type TransferBurst } from './token-transfers.ts';
import { benchIpfsUpload } from './ipfs-upload.ts';
import { measureIpfsBlockstores } from './ipfs-blockstores.ts';
import { measureSettlementHistory } from './settlement-history.ts';
import { measureStorageGrowth } from './storage-growth.ts';
import { measureIdleStreams } from './idle-streams.ts';
import { measureNodeCalls, measureRealChain } from './real-chain.ts';
import { measureNetworks, networksTable } from './networks.ts';
import { isNetworkName } from '../src/shared/networks.ts';
import { measureStatements } from './statements.ts';
import { measureX402Settles } from './x402-settles.ts';

const quick = process.argv.includes('--quick');
const plan = quick
  ? {
    runs: 3, levels: [1, 10, 100, 200], windowMs: 2_000, maxTotal: 1_000, requestWindowMs: 1_000, burst: 100, historyTarget: 50_000, historyBudgetMs: 20_000, chunk: 250,
    settlement: { burstBatches: 10, chunkBatches: 20, holders: 200 }, idleSteps: [500, 1_000, 2_000],
    // 0.45 s blocks (BNB Smart Chain) at 200/s: issue 37's goal of p99 ≤ 3 blocks at high rates.
    realChain: { blockTimes: [2, 0.45], rates: [1, 10, 100], ratesByBlockTime: { '0.45': [200] }, durationMs: 10_000, runs: 1, accounts: 100 },
    x402: { payments: 100, ratePerSecond: 10, blockTime: 2, publishedSigners: 40 },
    // 12 s blocks: 48 s runs (4 blocks); 2 s: 12 s (6 blocks); 0.45 and 0.25 s: 8 s (18 and 32 blocks).
    networks: { rates: [10, 40, 200], durationMs: (blockTime: number) => (blockTime >= 12 ? 48_000 : blockTime >= 2 ? 12_000 : 8_000), accounts: 100 },
  }
  : {
    runs: 3, levels: [1, 10, 100, 200], windowMs: 6_000, maxTotal: 3_000, requestWindowMs: 3_000, burst: 200, historyTarget: 50_000, historyBudgetMs: 120_000, chunk: 500,
    settlement: { burstBatches: 20, chunkBatches: 25, holders: 500 }, idleSteps: [1_000, 5_000, 10_000],
    realChain: { blockTimes: [2, 12, 0.45], rates: [1, 10, 100], ratesByBlockTime: { '0.45': [200] }, durationMs: 30_000, runs: 2, accounts: 100 },
    x402: { payments: 200, ratePerSecond: 10, blockTime: 2, publishedSigners: 40 },
    // 12 s blocks: 120 s runs (10 blocks); every shorter rhythm: 30 s.
    networks: { rates: [10, 40, 200], durationMs: (blockTime: number) => (blockTime >= 12 ? 120_000 : 30_000), accounts: 100 },
  };
const sections = ['token-api', 'requests', 'payments', 'chain-history', 'settlement-history', 'storage-growth', 'idle-streams', 'real-chain', 'node-calls', 'statements', 'x402', 'ipfs', 'networks'] as const;
type Section = typeof sections[number];
const onlyArgument = process.argv.find((arg) => arg.startsWith('--only='));
const only = onlyArgument?.slice('--only='.length).split(',').filter(Boolean);
for (const name of only ?? []) if (!sections.includes(name as Section)) throw new Error(`--only: unknown section ${name} (sections: ${sections.join(', ')})`);
const runs = (section: Section) => !only || only.includes(section);
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

const loadBefore = load1();
/** A machine busy with other work before and after the run: its latencies say more about the machine than about the platform. */
const busyNote = () => {
  const cores = os.availableParallelism();
  const busiest = Math.max(loadBefore, load1());
  return busiest > cores ? `shared machine under load: load average ${loadBefore} at the start and ${load1()} at the end on ${cores} cores (other work was running); latencies and rates are inflated, ratios within one run are what to compare` : undefined;
};

// 1. The baseline: a fresh bare anvil per run, one ERC-20 transaction per transfer.
let anvilErc20: ReturnType<typeof spread> | undefined;
if (runs('token-api') || runs('payments')) {
  log(`bare anvil: ${plan.burst} transfers from ${plan.burst} EOAs, ${plan.runs} fresh chains`);
  const anvilRuns = await repeat(plan.runs, async () => {
    const chain = await startBareChain();
    try { return (await erc20Burst(chain, plan.burst)).perSecond; } finally { await chain.stop(); }
  });
  anvilErc20 = spread(anvilRuns);
  log(`bare anvil: ${format(anvilErc20, '/s')}`);
}

// 2. Token API transfers, then request rates, on one platform; the load from a process of its own.
// `requests` alone: the request rates without the transfers (a fresh platform, no funding).
async function requestRates(platform: Awaited<ReturnType<typeof startBenchPlatform>>, load: Awaited<ReturnType<typeof startLoadClient>>) {
  const measured = [];
  for (const probe of await requestProbes(platform)) {
    measured.push(await measureRequestRate(platform, load, probe, { runs: plan.runs, concurrency: 32, windowMs: plan.requestWindowMs, maxTotal: 100_000 }));
    log(`${probe.name}: ${format(measured.at(-1)!.platform, '/s')} vs bare Fastify ${format(measured.at(-1)!.bareFastify, '/s')}`);
  }
  return measured;
}
let tokenTransfers, requests;
if (!runs('token-api') && runs('requests')) {
  const load = await startLoadClient();
  const requestPlatform = await startBenchPlatform();
  try {
    requests = await requestRates(requestPlatform, load);
  } finally {
    await requestPlatform.stop();
    await load.stop();
  }
}
if (runs('token-api')) {
  const load = await startLoadClient();
  const tokenPlatform = await startBenchPlatform();
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
      return { ...summary, vsBareAnvil: ratio(summary.transfersPerSecond, anvilErc20!) };
    });
    requests = await requestRates(tokenPlatform, load);
  } finally {
    await tokenPlatform.stop();
    await load.stop();
  }
}

// 3. gRPC payments.
let payments;
if (runs('payments')) {
  const paymentPlatform = await startBenchPlatform({ grpc: true });
  const load = await startLoadClient();
  try {
    log(`payments: ${maxLevel} users and stores`);
    const pairs = await paymentPairs(paymentPlatform, maxLevel);
    const target = paymentTargetOf(paymentPlatform);
    const bursts = new Map<number, PaymentBurst[]>(plan.levels.map((level) => [level, []]));
    for (let run = 0; run < plan.runs; run++) {
      for (const level of plan.levels) {
        const burst = await load.run({ kind: 'payments', target, pairs: pairs.slice(0, level), windowMs: plan.windowMs, maxTotal: plan.maxTotal });
        bursts.get(level)!.push(burst);
        log(`payments run ${run + 1}, ${level} pairs: ${burst.perSecond.toFixed(1)}/s p50 ${burst.p50.toFixed(0)} ms p99 ${burst.p99.toFixed(0)} ms, ${burst.completed} ok ${burst.failed} failed`);
      }
    }
    payments = plan.levels.map((level) => {
      const summary = summarisePayments(level, bursts.get(level)!);
      return { ...summary, vsBareAnvil: ratio(summary.paymentsPerSecond, anvilErc20!) };
    });
  } finally {
    await load.stop();
    await paymentPlatform.stop();
  }
}

// 4. The chain as its history grows: the platform's anvil settings, then a bare anvil to the same count.
const history = { burst: plan.burst, chunk: plan.chunk, probes: plan.runs };
let platformSettings, bareAnvil;
if (runs('chain-history')) {
  log(`chain history, platform settings: up to ${plan.historyTarget} transactions or ${plan.historyBudgetMs / 1000} s`);
  platformSettings = await measureChainHistory({ platformSettings: true, target: plan.historyTarget, budgetMs: plan.historyBudgetMs, chunkSize: plan.chunk, burst: plan.burst, probes: plan.runs });
  log(`  ${platformSettings.transactions} transactions: ${format(platformSettings.after, '/s')} vs fresh ${format(platformSettings.fresh, '/s')}`);
  bareAnvil = await measureChainHistory({ platformSettings: false, target: platformSettings.transactions, budgetMs: plan.historyBudgetMs, chunkSize: plan.chunk, burst: plan.burst, probes: plan.runs });
  log(`  bare, ${bareAnvil.transactions} transactions: ${format(bareAnvil.after, '/s')} vs fresh ${format(bareAnvil.fresh, '/s')}`);
}

// 5. The same, with transfers settled as the platform settles them: 100 EIP-3009 authorizations per
// VixpSettlement transaction, on an anvil with the platform's settings, to 50,000 transfers.
let settlementBatches;
if (runs('settlement-history')) {
  const s = plan.settlement;
  log(`chain history, settlement batches of 100: bursts of ${s.burstBatches * 100} transfers, fill to ${plan.historyTarget} transfers or ${plan.historyBudgetMs / 1000} s`);
  const platform = await measureSettlementHistory({ platformSettings: true, target: plan.historyTarget, budgetMs: plan.historyBudgetMs, probes: plan.runs, ...s });
  log(`  ${platform.transfers} transfers in ${platform.transactions} transactions: ${format(platform.after, '/s')} vs fresh ${format(platform.fresh, '/s')} (${platform.afterVsFresh}x); ${platform.checkpoints?.count ?? 0} checkpoints during the fill, one after it ${platform.checkpoints?.afterFillMs ?? '?'} ms for ${platform.stateFileMiB} MiB; ${platform.blocksMinedByHand} blocks mined by hand`);
  const bare = await measureSettlementHistory({ platformSettings: false, target: platform.transfers, budgetMs: plan.historyBudgetMs, probes: plan.runs, ...s });
  log(`  bare, ${bare.transfers} transfers: ${format(bare.after, '/s')} vs fresh ${format(bare.fresh, '/s')} (${bare.afterVsFresh}x); ${bare.blocksMinedByHand} blocks mined by hand`);
  settlementBatches = { ...platform, bareAnvil: bare, platformVsBareAfter: ratio(platform.after, bare.after) };
}

// 5b. What bounds the rate after 50,000 settled transfers: anvil's cost of a block grows with the
// state's storage slots (one per used authorization), measured without any history.
let storageGrowth;
if (runs('storage-growth')) {
  log(`storage growth: the baseline burst on a bare anvil, fresh and with ${plan.historyTarget} more storage slots`);
  storageGrowth = await measureStorageGrowth({ slots: plan.historyTarget, burst: plan.burst, probes: plan.runs });
  log(`  ${format(storageGrowth.after, '/s')} vs fresh ${format(storageGrowth.fresh, '/s')} (${storageGrowth.afterVsFresh}x)`);
}

// 6. Memory of idle authenticated DoPayment streams, beside bare HTTP/2 streams.
let idleStreams;
if (runs('idle-streams')) {
  idleStreams = await measureIdleStreams({ steps: plan.idleSteps, holdMs: 11_000, log });
}

// 7. Settlement on a chain that mines at intervals (anvil --block-time), Poisson arrivals, beside one transfer per transaction.
let realChain;
if (runs('real-chain')) {
  const load = await startLoadClient();
  try {
    realChain = await measureRealChain({ ...plan.realChain, log }, load);
  } finally {
    await load.stop();
  }
}

// 7b. Node calls per settled transfer and per idle minute on 2 s blocks: heads polled, and pushed (WS_URL_ETHEREUM).
let nodeCalls;
if (runs('node-calls')) {
  const load = await startLoadClient();
  try {
    nodeCalls = await measureNodeCalls({
      blockTime: 2, rates: [1, 10, 100], durationMs: (rate) => (rate <= 1 ? (quick ? 30_000 : 60_000) : (quick ? 15_000 : 30_000)),
      idleMs: 60_000, accounts: 100, modes: ['polled', 'pushed'], log,
    }, load);
  } finally {
    await load.stop();
  }
}

// 8. A store's daily statement on a day of 100,000 payments, beside one plain query reading the same rows.
let statements;
if (runs('statements')) {
  log('statements: a day of 100,000 payments for one store, the statement beside one plain query of the same rows');
  statements = await measureStatements({ payments: 100_000, runs: plan.runs, log });
  log(`  statement ${format(statements.statementMs, ' ms')} vs plain query ${format(statements.plainQueryMs, ' ms')}`);
}

// 9. x402 settles at Poisson 10/s on 2 s blocks through the platform's facilitator, beside the published
// exact facilitator (one transferWithAuthorization per payment) on the same chain in the same run.
let x402;
if (runs('x402')) {
  const load = await startLoadClient();
  try {
    x402 = await measureX402Settles({ ...plan.x402, log }, load);
  } finally {
    await load.stop();
  }
}

// 10. Each network at its own rhythm (12 s, 2 s, 0.45 s, 0.25 s; the OP-stack ones also on Hardhat's
// EDR for L1 data fees), Poisson 10, 40 and 200/s, beside one transferWithAuthorization and the contract's floor.
let networks;
if (runs('networks')) {
  const load = await startLoadClient();
  try {
    // `--networks=optimism,opbnb`: only those networks' rows.
    const chosen = process.argv.find((arg) => arg.startsWith('--networks='))?.slice('--networks='.length).split(',').filter(isNetworkName);
    networks = await measureNetworks({ ...plan.networks, ...(chosen && { networks: chosen }), log }, load);
  } finally {
    await load.stop();
  }
}

const ipfsUpload = process.argv.includes('--ipfs') ? await benchIpfsUpload() : undefined;
// Add and cat of 64 MiB on the file and the PostgreSQL blockstores beside sha256sum (bench/ipfs-blockstores.ts).
const ipfsBlockstores = runs('ipfs') ? await measureIpfsBlockstores() : undefined;

const date = new Date().toISOString().slice(0, 10);
const results = {
  date, mode: quick ? 'quick' : 'full', ...(only && { only }), durationSeconds: Math.round((Date.now() - began) / 1000),
  hardware: hardware(), loadAverageAtStart: loadBefore, loadAverageAtEnd: load1(), ...(busyNote() && { note: busyNote() }),
  ...(anvilErc20 && { baseline: { anvilErc20: { transfersPerEoaBurst: plan.burst, transfersPerSecond: anvilErc20 } } }),
  ...(tokenTransfers && { tokenTransfers: { windowMs: plan.windowMs, levels: tokenTransfers } }),
  ...(payments && { payments: { windowMs: plan.windowMs, levels: payments } }),
  ...(requests && { requests: { concurrency: 32, windowMs: plan.requestWindowMs, probes: requests } }),
  ...((platformSettings || settlementBatches || storageGrowth) && {
    chainHistory: {
      ...(platformSettings && bareAnvil && { ...history, platformSettings, bareAnvil, platformVsBareAfter: ratio(platformSettings.after, bareAnvil.after) }),
      ...(settlementBatches && { settlementBatches }),
      ...(storageGrowth && { storageGrowth }),
    },
  }),
  ...(idleStreams && { idleStreams }),
  ...(realChain && { realChain }),
  ...(nodeCalls && { nodeCalls }),
  ...(statements && { statements }),
  ...(x402 && { x402 }),
  ...(networks && { networks }),
  ...(ipfsUpload && { ipfsUpload }),
  ...(ipfsBlockstores && { ipfsBlockstores }),
};
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const jsonFile = new URL(`./results/${quick ? 'quick-' : ''}${only ? 'partial-' : ''}${date}.json`, import.meta.url);
writeFileSync(jsonFile, `${JSON.stringify(results, null, 2)}\n`);
const chartFile = writeChart(jsonFile.pathname);

const row = (figure: string, measured: string, baseline: string, r: number | string) => console.log(`${figure.padEnd(40)} ${measured.padEnd(34)} ${baseline.padEnd(34)} ${r}`);
console.log('');
row('figure (median [min–max])', 'measured', 'baseline', 'ratio');
for (const l of tokenTransfers ?? []) row(`token API, ${l.senders} senders`, `${format(l.transfersPerSecond, '/s')} p50 ${l.p50Ms.median} p99 ${l.p99Ms.median} ms`, `bare anvil ${format(anvilErc20!, '/s')}`, `${l.vsBareAnvil}x`);
for (const l of payments ?? []) row(`gRPC payments, ${l.pairs} pairs`, `${format(l.paymentsPerSecond, '/s')} p50 ${l.p50Ms.median} p99 ${l.p99Ms.median} ms`, `bare anvil ${format(anvilErc20!, '/s')}`, `${l.vsBareAnvil}x`);
for (const r of requests ?? []) row(r.request, format(r.platform, '/s'), `bare Fastify ${format(r.bareFastify, '/s')}`, `${r.ratio}x`);
if (platformSettings && bareAnvil) {
  for (const [name, h] of [['platform anvil settings', platformSettings], ['bare anvil', bareAnvil]] as const) {
    row(`chain after ${h.transactions} tx (${name})`, format(h.after, '/s'), `fresh ${format(h.fresh, '/s')}`, `${h.afterVsFresh}x`);
  }
}
if (settlementBatches) {
  for (const [name, h] of [['platform', settlementBatches], ['bare anvil', settlementBatches.bareAnvil]] as const) {
    row(`chain after ${h.transfers} batched (${name})`, format(h.after, '/s'), `fresh ${format(h.fresh, '/s')}`, `${h.afterVsFresh}x`);
  }
}
if (storageGrowth) row(`chain with ${storageGrowth.slots} more storage slots`, format(storageGrowth.after, '/s'), `fresh ${format(storageGrowth.fresh, '/s')}`, `${storageGrowth.afterVsFresh}x`);
if (idleStreams) {
  for (const [i, step] of idleStreams.platform.steps.entries()) {
    const bare = idleStreams.bareHttp2.steps[i]!;
    const signed = (mib: number) => `${mib >= 0 ? '+' : ''}${mib} MiB`;
    row(`${step.streams} idle DoPayment streams`, `RSS ${step.rssMiB} MiB, ${signed(step.growthMiB)}`, `bare HTTP/2 ${signed(bare.growthMiB)}`, `${step.marginalMiBPer1000} MiB/1,000 marginal`);
  }
  if (idleStreams.withinTarget !== undefined) row(`${idleStreams.target.streams} idle streams under ${idleStreams.target.maxRssMB} MB`, String(idleStreams.withinTarget), '', '');
}
for (const chain of realChain ?? []) {
  row(`${chain.blockTimeSeconds} s blocks: direct transferWithAuthorization`, `${chain.direct.gas} gas, ${chain.direct.calldataBytes} B`, '', '');
  row(`${chain.blockTimeSeconds} s blocks: fullest batch (${chain.floor.items} sent at once)`, `${chain.floor.gasPerTransfer} gas, ${chain.floor.calldataBytesPerTransfer} B per transfer`, '', '');
  for (const l of chain.levels) {
    const figures = (m: typeof l.batched) => `${m.transfersPerTransaction.median}/tx ${m.transactionsPerBlock.median} tx/blk ${m.gasPerTransfer.median} gas ${m.calldataBytesPerTransfer.median} B ${m.rpcCallsPerTransfer.median} calls p50 ${m.p50Ms.median} ms/${m.p50Blocks.median} blk p99 ${m.p99Ms.median} ms/${m.p99Blocks.median} blk`;
    console.log(`${chain.blockTimeSeconds} s blocks, Poisson ${l.ratePerSecond}/s\n  batched:      ${figures(l.batched)}\n  one per tx:   ${figures(l.oneByOne)}\n  gas vs floor ${l.gasVsFloor}x, vs direct ${l.gasVsDirect}x`);
  }
}
if (statements) {
  row(`statement, ${statements.payments} payments in a day`, `${format(statements.statementMs, ' ms')}, RSS +${statements.statementRssGrowthMiB.median} MiB`,
    `plain query ${format(statements.plainQueryMs, ' ms')}, RSS +${statements.plainQueryRssGrowthMiB.median} MiB`, `${statements.statementVsPlainQuery}x`);
}
if (x402) {
  const settles = (f: typeof x402.platform) => `${f.gasPerPayment} gas, ${f.paymentsPerTransaction}/tx, settle p50 ${f.settleP50Ms} p99 ${f.settleP99Ms} ms`;
  row(`x402, Poisson ${x402.ratePerSecond}/s, ${x402.blockTimeSeconds} s blocks`, settles(x402.platform), `1 tx each: ${settles(x402.published)}`, `${x402.gasRatio}x gas`);
}
const rss = tokenTransfers?.at(-1);
if (rss) row(`server RSS growth, ${rss.senders}-sender burst`, format(rss.serverRssGrowthMiB, ' MiB'), '', '');
if (networks) console.log(`\n${networksTable(networks)}`);
if (results.note) console.log(`\nnote: ${results.note}`);
console.log(`\n${jsonFile.pathname}\n${chartFile}\n${results.durationSeconds} s`);
