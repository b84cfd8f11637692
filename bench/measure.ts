// What every figure is made of: several runs summarised as a median with its min and max, latency
// percentiles, and ratios of medians. A noisy shared machine makes a single run meaningless.

/** The median of several runs of one figure, with the smallest and largest run. */
export interface Spread {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

const round = (value: number, digits: number) => Number(value.toFixed(digits));

export function spread(values: number[], digits = 1): Spread {
  if (values.length === 0) throw new Error('spread: no runs');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  return { median: round(median, digits), min: round(sorted[0]!, digits), max: round(sorted.at(-1)!, digits), runs: values.map((v) => round(v, digits)) };
}

/** Nearest-rank percentile (q in 0..1) of unsorted samples. */
export function percentile(samples: number[], q: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** Ratio of the medians, measured / baseline. */
export function ratio(measured: Spread, baseline: Spread): number {
  return round(measured.median / baseline.median, 3);
}

/** Runs `measure` `times` times, one after the other. */
export async function repeat<T>(times: number, measure: (run: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let run = 0; run < times; run++) results.push(await measure(run));
  return results;
}

/** Samples this process's RSS while `work` runs: the growth of the peak over the RSS at the start. */
export async function rssGrowthDuring<T>(work: () => Promise<T>, intervalMs = 20): Promise<{ result: T; rssGrowthMiB: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const timer = setInterval(() => { peak = Math.max(peak, process.memoryUsage.rss()); }, intervalMs);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, rssGrowthMiB: round((peak - before) / 2 ** 20, 1) };
  } finally {
    clearInterval(timer);
  }
}

export const format = (s: Spread, unit = '') => `${s.median}${unit} [${s.min}–${s.max}]`;
