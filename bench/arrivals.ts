/** What the Poisson load clients share: a seeded generator, so one seed gives the same arrivals, and the wall clock they stamp. */

/** A small seeded generator (mulberry32): uniform in [0, 1). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Epoch milliseconds with sub-millisecond resolution. */
export const wallClock = () => performance.timeOrigin + performance.now();
