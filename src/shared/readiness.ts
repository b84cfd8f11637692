/** One dependency's answer: `up`, or `down` with why. */
export interface CheckResult {
  status: 'up' | 'down';
  /** How long the probe took, in milliseconds. */
  ms: number;
  error?: string;
}

export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, CheckResult>;
  /** What an operator should act on that does not stop this instance taking traffic (a lane low on gas); absent when none. */
  warnings?: Record<string, string>;
  /** What the instance knows without asking anyone (each node endpoint's state and calls), by name; absent when none. */
  details?: Record<string, unknown>;
}

/** A warning's source: its text when there is something to say, undefined when not. */
export type WarningSource = (signal: AbortSignal) => Promise<string | undefined>;

/** A probe resolves when its dependency answers; it is given a signal aborted at its timeout. */
export type Probe = (signal: AbortSignal) => Promise<unknown>;

/**
 * The dependencies an instance needs to take traffic, probed together on demand (`GET /readyz`):
 * each probe runs in parallel with its own short timeout, so one dead node neither hides another
 * nor holds the answer past the timeout.
 */
export function createReadiness(options: { timeoutMs?: number } = {}) {
  const timeoutMs = options.timeoutMs ?? 1000;
  const probes = new Map<string, Probe>();
  const warnings = new Map<string, WarningSource>();
  const details = new Map<string, () => unknown>();

  async function runOne(probe: Probe): Promise<CheckResult> {
    const started = performance.now();
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new Error(`no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    });
    try {
      await Promise.race([probe(controller.signal), timeout]);
      return { status: 'up', ms: Math.round(performance.now() - started) };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      // The first line only: a node client's error carries the request and a docs URL after it.
      return { status: 'down', ms: Math.round(performance.now() - started), error: message.split('\n')[0]!.slice(0, 200) };
    } finally {
      clearTimeout(timer);
    }
  }

  return {
    /** Adds (or replaces) the probe named `name`, e.g. `store`, `chain:bnb`, `grpc`. */
    add(name: string, probe: Probe): void { probes.set(name, probe); },
    remove(name: string): void { probes.delete(name); },
    /** Adds a warning (`gas`): reported beside the checks, never making the instance not ready. */
    warn(name: string, source: WarningSource): void { warnings.set(name, source); },
    /** Adds a detail (`endpoints`): read as it is, no call made, never making the instance not ready. */
    detail(name: string, read: () => unknown): void { details.set(name, read); },
    async check(): Promise<ReadinessReport> {
      const [entries, said] = await Promise.all([
        Promise.all([...probes].map(async ([name, probe]) => [name, await runOne(probe)] as const)),
        // A warning that cannot be read in time says nothing: the checks say what is down.
        Promise.all([...warnings].map(async ([name, source]) => {
          let text: string | undefined;
          await runOne(async (signal) => { text = await source(signal); });
          return [name, text] as const;
        })),
      ]);
      const spoken = said.filter((entry): entry is readonly [string, string] => entry[1] !== undefined);
      return {
        ready: entries.every(([, result]) => result.status === 'up'), checks: Object.fromEntries(entries),
        ...(spoken.length > 0 && { warnings: Object.fromEntries(spoken) }),
        ...(details.size > 0 && { details: Object.fromEntries([...details].map(([name, read]) => [name, read()])) }),
      };
    },
  };
}

export type Readiness = ReturnType<typeof createReadiness>;
