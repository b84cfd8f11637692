import fc from 'fast-check';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ChaosFleet, LinkName } from './fleet.ts';
import { names } from './fleet.ts';

/**
 * One schedule: the mining family, the workload's operations and the nemesis's faults, each at a
 * time within the window; all drawn by fast-check from the run's seed (the same seed and path: the
 * same schedule). Faults overlap freely: two at once, one during the recovery from another.
 */
export type FaultKind = 'kill' | 'pause' | 'pg-terminate' | 'pg-link' | 'redis-link' | 'node-link' | 'node-slow'
  | 'pg-restart' | 'redis-down' | 'node-rollback' | 'disk-full';
export const faultKinds: readonly FaultKind[] = [
  'kill', 'pause', 'pg-terminate', 'pg-link', 'redis-link', 'node-link', 'node-slow', 'pg-restart', 'redis-down', 'node-rollback', 'disk-full',
];
/** Faults of the whole fleet: their target is not drawn (shown as every instance). */
const fleetWide: ReadonlySet<FaultKind> = new Set(['node-slow', 'pg-restart', 'redis-down', 'node-rollback']);

export interface Fault {
  atMs: number;
  kind: FaultKind;
  /** The instance (for a fault of the whole fleet, node-slow, pg-restart, redis-down, node-rollback: none). */
  target: number;
  /**
   * How long it lasts: a killed instance is started again after it, a paused one continued, a link
   * healed, PostgreSQL or Redis started again, a disk freed; a rollback loses the blocks of this long.
   */
  durationMs: number;
  /** For a link: cut (reset), partition (silence) or delay. */
  mode: 'cut' | 'partition' | 'delay';
  delayMs: number;
}

export type OpKind = 'transfer' | 'rest-pay' | 'payment' | 'reward' | 'x402';
export const opKinds: readonly OpKind[] = ['transfer', 'rest-pay', 'payment', 'reward', 'x402'];

export interface Op {
  atMs: number;
  kind: OpKind;
  /** Instances of its steps: [first, second, third] (POS, app, cancel; sign, send; issue, claim; pay, retry; settle, look up). */
  on: [number, number, number];
  /** A payment's cancellation afterwards. */
  cancel: 'none' | 'partial' | 'whole';
}

export interface Schedule {
  family: 'interval' | 'automine';
  windowMs: number;
  ops: Op[];
  faults: Fault[];
}

const instance = fc.integer({ min: 0, max: names.length - 1 });

export function scheduleArbitrary(windowMs: number): fc.Arbitrary<Schedule> {
  // Times without fast-check's bias to the edges (which put most of a first run's faults at +0 s and
  // the window's last millisecond): spread over the window. Durations and delays keep it.
  const at = fc.noBias(fc.integer({ min: 0, max: windowMs - 1 }));
  const op: fc.Arbitrary<Op> = fc.record({
    atMs: at, kind: fc.constantFrom(...opKinds), on: fc.tuple(instance, instance, instance),
    cancel: fc.constantFrom('none', 'partial', 'whole'),
  });
  const faultOf = (kind: fc.Arbitrary<FaultKind>): fc.Arbitrary<Fault> => fc.record({
    atMs: at, kind, target: instance,
    durationMs: fc.integer({ min: 1_000, max: 12_000 }), mode: fc.constantFrom('cut', 'partition', 'delay'),
    delayMs: fc.integer({ min: 100, max: 4_000 }),
  }).map((fault) => (fleetWide.has(fault.kind) ? { ...fault, target: 0 } : fault));
  const opCount = Math.max(6, Math.round(windowMs / 2_500));
  // Every kind once, at a time, on an instance and for a duration of its own draw (so that a run of
  // any seed exercises each), then more faults of any kind.
  const extraFaults = Math.round(windowMs / 20_000);
  return fc.record({
    // One family in four on automine: each transaction mined as it arrives.
    family: fc.constantFrom('interval', 'interval', 'interval', 'automine'),
    windowMs: fc.constant(windowMs),
    ops: fc.array(op, { minLength: opCount, maxLength: opCount }).map((ops) => ops.sort((a, b) => a.atMs - b.atMs)),
    faults: fc.tuple(fc.tuple(...faultKinds.map((kind) => faultOf(fc.constant(kind)))), fc.array(faultOf(fc.constantFrom(...faultKinds)), { maxLength: extraFaults }))
      .map(([each, more]) => [...each, ...more].sort((a, b) => a.atMs - b.atMs)),
  });
}

export function describeFault(fault: Fault): string {
  const who = fleetWide.has(fault.kind) ? 'every instance' : names[fault.target];
  const how = fault.kind.endsWith('-link') ? ` ${fault.mode}${fault.mode === 'delay' ? ` ${fault.delayMs} ms` : ''}` : fault.kind === 'node-slow' ? ` ${fault.delayMs} ms` : '';
  const lasting = fault.kind === 'pg-terminate' ? '' : fault.kind === 'node-rollback' ? ` losing ${(fault.durationMs / 1000).toFixed(1)} s of blocks`
    : ` for ${(fault.durationMs / 1000).toFixed(1)} s`;
  return `+${(fault.atMs / 1000).toFixed(1)} s ${fault.kind}${how} ${who}${lasting}`;
}

export function describeSchedule(schedule: Schedule): string {
  const ops = opKinds.map((kind) => `${schedule.ops.filter((o) => o.kind === kind).length} ${kind}`).join(', ');
  return [`family ${schedule.family}, window ${schedule.windowMs / 1000} s, ops: ${ops}`, ...schedule.faults.map((f) => `  ${describeFault(f)}`)].join('\n');
}

/**
 * The nemesis: applies each fault at its time and undoes it after its duration (a link goes back to
 * passing once no fault holds it any more). Answers when the last fault is undone, with how many
 * faults of each kind were applied; faults that fail to apply (an instance already down, a full disk
 * where no tmpfs could be mounted) are logged and skipped.
 */
export async function runNemesis(fleet: ChaosFleet, schedule: Schedule, log: (line: string) => void): Promise<Map<FaultKind, number>> {
  const started = Date.now();
  const applied = new Map<FaultKind, number>();
  const holds = new Map<string, number>();
  const hold = (i: number, link: LinkName, delta: number) => {
    const key = `${i}:${link}`;
    const count = (holds.get(key) ?? 0) + delta;
    holds.set(key, count);
    return count;
  };
  const linkOf: Partial<Record<FaultKind, LinkName>> = { 'pg-link': 'pg', 'redis-link': 'redis', 'node-link': 'node' };
  await Promise.all(schedule.faults.map(async (fault) => {
    await sleep(Math.max(0, fault.atMs - (Date.now() - started)));
    log(`nemesis ${describeFault(fault)}`);
    const i = fault.target;
    let skipped = false;
    const skip = (why: string) => {
      skipped = true;
      log(`  ${describeFault(fault)}: skipped, ${why}`);
    };
    try {
      switch (fault.kind) {
        case 'kill':
          fleet.kill(i);
          await sleep(fault.durationMs);
          await fleet.restart(i);
          break;
        case 'pause':
          fleet.pause(i);
          await sleep(fault.durationMs);
          fleet.resume(i);
          break;
        case 'pg-terminate':
          log(`  terminated ${await fleet.terminatePostgres(i)} backends of ${names[i]}`);
          break;
        case 'pg-link': case 'redis-link': case 'node-link': {
          const link = linkOf[fault.kind]!;
          hold(i, link, 1);
          fleet.setLink(i, link, fault.mode === 'delay' ? { kind: 'delay', delayMs: fault.delayMs } : { kind: fault.mode });
          await sleep(fault.durationMs);
          if (hold(i, link, -1) === 0) fleet.setLink(i, link, { kind: 'pass' });
          break;
        }
        case 'pg-restart':
          if (!await fleet.restartPostgres(fault.durationMs)) skip('a restart is under way');
          break;
        case 'redis-down':
          await fleet.redisDown(fault.durationMs);
          break;
        case 'node-rollback':
          if (!await fleet.rollback(fault.durationMs)) skip('a rollback is under way');
          else log(`  ${describeFault(fault)}: reverted`);
          break;
        case 'disk-full': {
          const refused = await fleet.fillDisk(i, fault.durationMs);
          if (refused) skip(refused);
          break;
        }
        case 'node-slow':
          for (const n of names.keys()) {
            hold(n, 'node', 1);
            fleet.setLink(n, 'node', { kind: 'delay', delayMs: fault.delayMs });
          }
          await sleep(fault.durationMs);
          for (const n of names.keys()) if (hold(n, 'node', -1) === 0) fleet.setLink(n, 'node', { kind: 'pass' });
          break;
      }
      if (!skipped) applied.set(fault.kind, (applied.get(fault.kind) ?? 0) + 1);
    } catch (error) {
      log(`  ${describeFault(fault)}: ${(error as Error).message.slice(0, 300)}`);
    }
  }));
  return applied;
}

/**
 * What a failing schedule prints: the seed, the schedule's number, each violation with its
 * operation, the schedule (faults, times, operations), and the command that replays that schedule
 * alone (`--path`: fast-check's index of it among the seed's schedules, from 0).
 */
export function failureReport(run: { seed: number; number: number; minutes: number; path?: string | undefined }, schedule: Schedule, violations: ReadonlyArray<{ op?: string; message: string }>): string {
  return [
    `seed ${run.seed}, schedule ${run.number}: ${violations.length} violation(s):`,
    ...violations.map((v) => `  ${v.op ?? 'fleet'}: ${v.message}`),
    'schedule:',
    describeSchedule(schedule),
    `replay: ${replayCommand(run)}`,
  ].join('\n');
}

/** The command that replays schedule `number` (from 1) of a run of `seed` (itself a replay of `path`, when given). */
export function replayCommand(run: { seed: number; number: number; minutes: number; path?: string | undefined }): string {
  return `npm run test:chaos -- --seed ${run.seed} --minutes ${run.minutes} --path ${Math.max(0, run.number - 1) + Number(run.path ?? 0)} --schedules 1`;
}
