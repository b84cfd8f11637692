/**
 * A lock per key in this process: `run(key, work)` starts `work` once every earlier work of the same
 * key has ended (settled either way), and answers what `work` answers. Works of other keys go on
 * meanwhile. A key's entry is freed when its last work ends.
 */
export function keyedLock(): <T>(key: string, work: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return (key, work) => {
    const run = (tails.get(key) ?? Promise.resolve()).then(work, work);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    void tail.then(() => { if (tails.get(key) === tail) tails.delete(key); });
    return run;
  };
}
