/**
 * `work`, or a rejection once `ms` have passed (Infinity: wait for it): the work itself goes on,
 * unawaited. What bounds each step of a shutdown, so one dependency that does not answer cannot
 * hold up the steps after it.
 */
export function withinMs<T>(work: Promise<T>, ms: number, what = 'the step'): Promise<T> {
  if (!Number.isFinite(ms)) return work;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${Math.max(0, Math.round(ms))} ms; abandoned`)), Math.max(0, ms));
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
