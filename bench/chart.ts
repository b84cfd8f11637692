// The chart of one bench result: an SVG written beside its JSON, from the JSON alone.
// `npm run bench:chart [-- bench/results/<date>.json]` (default: the newest result).
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Spread } from './measure.ts';

interface Bar { label: string; value: Spread; note?: string; baseline?: boolean }
interface Line { label: string; points: Array<[number, number]>; colour: string }

const W = 480;
const H = 300;
const pad = { left: 56, right: 16, top: 34, bottom: 46 };
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
const text = (x: number, y: number, s: string, attrs = '') => `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${attrs}>${esc(s)}</text>`;

function niceMax(value: number): number {
  const step = 10 ** Math.floor(Math.log10(value || 1));
  return Math.ceil((value * 1.1) / step) * step;
}

function axes(title: string, yMax: number, yLabel: string): string[] {
  const out = [text(W / 2, 18, title, 'text-anchor="middle" font-weight="bold"')];
  for (let i = 0; i <= 4; i++) {
    const y = H - pad.bottom - ((H - pad.top - pad.bottom) * i) / 4;
    out.push(`<line x1="${pad.left}" x2="${W - pad.right}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    out.push(text(pad.left - 4, y + 4, String(Math.round((yMax * i) / 4)), 'text-anchor="end" font-size="10"'));
  }
  out.push(text(12, H / 2, yLabel, `transform="rotate(-90 12 ${H / 2})" text-anchor="middle" font-size="10"`));
  return out;
}

/** Bars at their median with a min–max whisker; a dashed line for the baseline's median. */
function barPanel(title: string, yLabel: string, bars: Bar[], baseline?: { label: string; value: Spread }): string {
  const yMax = niceMax(Math.max(...bars.map((b) => b.value.max), baseline?.value.max ?? 0));
  const y = (v: number) => H - pad.bottom - ((H - pad.top - pad.bottom) * v) / yMax;
  const slot = (W - pad.left - pad.right) / bars.length;
  const out = axes(title, yMax, yLabel);
  bars.forEach((bar, i) => {
    const x = pad.left + slot * i + slot * 0.2;
    const width = slot * 0.6;
    out.push(`<rect x="${x}" y="${y(bar.value.median)}" width="${width}" height="${H - pad.bottom - y(bar.value.median)}" fill="${bar.baseline ? '#bbb' : '#3b6ea5'}"/>`);
    const cx = x + width / 2;
    out.push(`<line x1="${cx}" x2="${cx}" y1="${y(bar.value.min)}" y2="${y(bar.value.max)}" stroke="#222"/>`);
    out.push(text(cx, y(bar.value.max) - 4, String(bar.value.median), 'text-anchor="middle" font-size="10"'));
    out.push(text(cx, H - pad.bottom + 14, bar.label, 'text-anchor="middle" font-size="10"'));
    if (bar.note) out.push(text(cx, H - pad.bottom + 27, bar.note, 'text-anchor="middle" font-size="9" fill="#555"'));
  });
  if (baseline) {
    const by = y(baseline.value.median);
    out.push(`<line x1="${pad.left}" x2="${W - pad.right}" y1="${by}" y2="${by}" stroke="#c0392b" stroke-dasharray="5 3"/>`);
    out.push(text(W - pad.right, by - 4, `${baseline.label} ${baseline.value.median} [${baseline.value.min}–${baseline.value.max}]`, 'text-anchor="end" font-size="10" fill="#c0392b"'));
  }
  return out.join('\n');
}

function linePanel(title: string, yLabel: string, xLabel: string, lines: Line[]): string {
  const xMax = niceMax(Math.max(1, ...lines.flatMap((l) => l.points.map(([x]) => x))));
  const yMax = niceMax(Math.max(1, ...lines.flatMap((l) => l.points.map(([, v]) => v))));
  const x = (v: number) => pad.left + ((W - pad.left - pad.right) * v) / xMax;
  const y = (v: number) => H - pad.bottom - ((H - pad.top - pad.bottom) * v) / yMax;
  const out = axes(title, yMax, yLabel);
  for (let i = 0; i <= 4; i++) out.push(text(x((xMax * i) / 4), H - pad.bottom + 14, String(Math.round((xMax * i) / 4)), 'text-anchor="middle" font-size="10"'));
  out.push(text(W / 2, H - 8, xLabel, 'text-anchor="middle" font-size="10"'));
  lines.forEach((line, i) => {
    out.push(`<polyline fill="none" stroke="${line.colour}" stroke-width="1.5" points="${line.points.map(([a, b]) => `${x(a).toFixed(1)},${y(b).toFixed(1)}`).join(' ')}"/>`);
    out.push(`<rect x="${W - pad.right - 150}" y="${pad.top + i * 14}" width="10" height="3" fill="${line.colour}"/>`);
    out.push(text(W - pad.right - 136, pad.top + 5 + i * 14, line.label, 'font-size="10"'));
  });
  return out.join('\n');
}

/** A flat line at `value` across `[0, xMax]`: a reference drawn beside a curve. */
const level = (value: number, xMax: number): Array<[number, number]> => [[0, value], [xMax, value]];

/** One measurement drawn as a bar without whiskers. */
const once = (value: number): Spread => ({ median: value, min: value, max: value, runs: [value] });

/** The panels of every figure the result holds (a partial run, `--only`, holds some). */
export function renderChart(results: any): string {
  const anvil = results.baseline?.anvilErc20.transfersPerSecond as Spread | undefined;
  const history = results.chainHistory;
  const settlement = history?.settlementBatches;
  const idle = results.idleStreams;
  const panels = [
    results.tokenTransfers && barPanel('Token API transfers/s (key scheme)', 'transfers/s', results.tokenTransfers.levels.map((l: any) => ({
      label: `${l.senders} senders`, value: l.transfersPerSecond, note: `p99 ${l.p99Ms.median} ms, ${l.vsBareAnvil}x`,
    })), anvil && { label: 'bare anvil, 1 tx/transfer', value: anvil }),
    results.payments && barPanel('gRPC payments/s', 'payments/s', results.payments.levels.map((l: any) => ({
      label: `${l.pairs} pairs`, value: l.paymentsPerSecond, note: `p99 ${l.p99Ms.median} ms, ${l.vsBareAnvil}x`,
    })), anvil && { label: 'bare anvil, 1 tx/transfer', value: anvil }),
    results.requests && barPanel('Requests/s against a bare Fastify handler', 'requests/s', results.requests.probes.flatMap((r: any) => [
      { label: r.request, value: r.platform, note: `${r.ratio}x` },
      { label: 'bare Fastify', value: r.bareFastify, baseline: true },
    ])),
    history?.platformSettings && linePanel('Chain transfer rate as history grows', 'transfers/s', 'transactions on the chain', [
      ['platform settings', history.platformSettings, '#c0392b'],
      ['bare anvil', history.bareAnvil, '#3b6ea5'],
    ].map(([label, h, colour]: any) => ({ label, colour, points: h.curve.map((p: any) => [p.transactions, p.perSecond]) }))),
    settlement && linePanel(`Settlement batches of ${settlement.batchItems}: rate as history grows (${settlement.afterVsFresh}x)`, 'transfers/s', 'transfers on the chain', [
      { label: `fill, platform settings`, colour: '#3b6ea5', points: settlement.curve.map((p: any) => [p.transfers, p.perSecond]) },
      ...(settlement.bareAnvil ? [{ label: 'fill, bare anvil', colour: '#888', points: settlement.bareAnvil.curve.map((p: any) => [p.transfers, p.perSecond]) }] : []),
      { label: `fresh burst ${settlement.fresh.median}/s`, colour: '#27ae60', points: level(settlement.fresh.median, settlement.transfers) },
      { label: `after ${settlement.transfers}: ${settlement.after.median}/s`, colour: '#c0392b', points: level(settlement.after.median, settlement.transfers) },
    ]),
    history?.storageGrowth && barPanel(`Bare anvil, ${history.storageGrowth.slots} more storage slots and no history (${history.storageGrowth.afterVsFresh}x)`, 'transfers/s', [
      { label: 'with the slots', value: history.storageGrowth.after },
      { label: 'fresh', value: history.storageGrowth.fresh, baseline: true },
    ]),
    idle && linePanel(`Idle DoPayment streams: server memory (target ${idle.target.maxRssMB} MB at ${idle.target.streams})`, 'MiB', 'idle streams', [
      { label: 'platform RSS', colour: '#c0392b', points: [[0, idle.platform.rssBeforeMiB], ...idle.platform.steps.map((p: any) => [p.streams, p.rssMiB])] },
      { label: 'platform RSS growth', colour: '#3b6ea5', points: [[0, 0], ...idle.platform.steps.map((p: any) => [p.streams, p.growthMiB])] },
      { label: 'bare HTTP/2 RSS growth', colour: '#888', points: [[0, 0], ...idle.bareHttp2.steps.map((p: any) => [p.streams, p.growthMiB])] },
    ]),
    ...(results.realChain ?? []).flatMap((chain: any) => {
      return [
        barPanel(`Gas per transfer, ${chain.blockTimeSeconds} s blocks, Poisson (grey: one per transaction)`, 'gas', chain.levels.flatMap((l: any) => [
          { label: `${l.ratePerSecond}/s`, value: l.batched.gasPerTransfer },
          { label: `${l.ratePerSecond}/s`, value: l.oneByOne.gasPerTransfer, baseline: true, note: 'one per tx' },
        ]), { label: `fullest batch (${chain.floor.items})`, value: once(chain.floor.gasPerTransfer) }),
        barPanel(`Transfer p50 ms, ${chain.blockTimeSeconds} s blocks, Poisson (grey: one per transaction)`, 'ms', chain.levels.flatMap((l: any) => [
          { label: `${l.ratePerSecond}/s`, value: l.batched.p50Ms },
          { label: `${l.ratePerSecond}/s`, value: l.oneByOne.p50Ms, baseline: true, note: 'one per tx' },
        ]), { label: 'block interval', value: once(chain.blockTimeSeconds * 1000) }),
      ];
    }),
    results.x402 && barPanel(`x402 gas per payment, Poisson ${results.x402.ratePerSecond}/s, ${results.x402.blockTimeSeconds} s blocks (${results.x402.gasRatio}x)`, 'gas', [
      { label: 'platform facilitator', value: once(results.x402.platform.gasPerPayment), note: `settle p50 ${results.x402.platform.settleP50Ms} ms` },
      { label: 'one transferWithAuthorization each', value: once(results.x402.published.gasPerPayment), baseline: true, note: `settle p50 ${results.x402.published.settleP50Ms} ms` },
    ]),
  ].filter((panel): panel is string => typeof panel === 'string');
  const hw = results.hardware;
  const runs = history?.probes ?? settlement?.fresh.runs.length ?? results.realChain?.[0]?.levels[0]?.batched.completed.length ?? (results.x402 ? 1 : 3);
  const caption = `${results.date} (${results.mode}${results.only ? `, only ${results.only.join(', ')}` : ''}): ${hw.nproc} × ${hw.cpuModel}, ${hw.memoryGiB} GiB, ${hw.node}, ${hw.anvil}; medians of ${runs} runs, whiskers min–max`;
  const rows = Math.ceil(panels.length / 2);
  const body = panels.map((panel, i) => `<g transform="translate(${(i % 2) * W},${Math.floor(i / 2) * H + 24})">\n${panel}\n</g>`).join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${2 * W}" height="${rows * H + 24}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/>
${text(W, 16, caption, 'text-anchor="middle" font-size="11" fill="#333"')}
${body}
</svg>
`;
}

/** Writes `<result>.svg` beside a result's JSON; answers its path. */
export function writeChart(jsonPath: string): string {
  const svgPath = jsonPath.replace(/\.json$/, '.svg');
  writeFileSync(svgPath, renderChart(JSON.parse(readFileSync(jsonPath, 'utf8'))));
  return svgPath;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = fileURLToPath(new URL('./results/', import.meta.url));
  const newest = readdirSync(dir).filter((f) => /^\d{4}-\d{2}-\d{2}\.json$/.test(f)).sort().at(-1);
  const file = process.argv[2] ?? (newest && path.join(dir, newest));
  if (!file) throw new Error('no result in bench/results: run npm run bench first');
  console.log(writeChart(path.resolve(file)));
}
