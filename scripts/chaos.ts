// npm run test:chaos -- --seed S[,S2,...] [--schedules N] [--minutes M] [--path P] [--logs DIR]
//
// A seeded random fault schedule over a fleet of three instances, checked against the chain
// (docs/reliability.md, "Chaos"): fast-check draws each schedule (mining family, workload, faults)
// from the seed; the fleet runs the workload while the nemesis applies the faults, then everything
// is healed, the fleet waits until quiet, and the checker reads the chain. A violation prints the
// seed, the path (fast-check's replay of that one schedule), the schedule and the operation. Several
// seeds (`--seed 1,2,3`) run one after the other on the same fleet (CI's form: one fleet start).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import fc from 'fast-check';
import { assertInvariants } from '../test/faults/rig.ts';
import { startChaosFleet, type ChaosFleet } from '../test/chaos/fleet.ts';
import { describeSchedule, failureReport, replayCommand, runNemesis, scheduleArbitrary, type Schedule } from '../test/chaos/schedule.ts';
import { checkRecords, type PendingMoves, type Violation } from '../test/chaos/checker.ts';
import { prepareWorkload, runWorkload } from '../test/chaos/workload.ts';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' }, schedules: { type: 'string', default: '1' }, minutes: { type: 'string', default: '1' },
    path: { type: 'string' }, verbose: { type: 'boolean', default: false },
    // On a violation, each instance's whole log is written there (`<seed>-<schedule>-<instance>.log`), not only its tail.
    logs: { type: 'string' },
  },
});
const parseWhole = (text: string | undefined, what: string, min: number) => {
  if (text === undefined || !/^-?\d+$/.test(text) || Number(text) < min) throw new Error(`--${what}: a whole number of at least ${min}, got ${text}`);
  return Number(text);
};
const seeds = values.seed === undefined ? [Date.now() % 2 ** 31] : values.seed.split(',').map((text) => parseWhole(text.trim(), 'seed', -(2 ** 31)));
const schedules = parseWhole(values.schedules, 'schedules', 1);
const minutes = Number(values.minutes);
if (!(minutes > 0 && minutes <= 60)) throw new Error(`--minutes: a number of minutes above 0 and at most 60, got ${values.minutes}`);
const windowMs = Math.round(minutes * 60_000);

/** A journaled transaction a failure names: its row, its versions, and what the chain says of each. */
async function journalDetail(fleet: ChaosFleet, message: string): Promise<string> {
  const hash = /0x[0-9a-f]{64}/i.exec(message)?.[0];
  if (!hash) return '';
  const { db } = fleet.operator.store;
  const { client } = fleet.operator.chains.ethereum;
  const rows = await db.selectFrom('chain_txs').selectAll().where('tx_hash', '=', hash).execute();
  const versions = rows.length === 0 ? [] : await db.selectFrom('chain_tx_versions').selectAll().where('chain_tx_id', '=', rows[0]!.id).execute().catch(() => []);
  const onChain = async (h: string) => {
    const receipt = await client.getTransactionReceipt({ hash: h as `0x${string}` }).catch(() => undefined);
    return receipt ? `${receipt.status} in block ${receipt.blockNumber}` : 'no receipt';
  };
  const brief = (row: object | undefined) => JSON.stringify(row ?? null, (key, value: unknown) => (key.startsWith('raw') ? undefined : typeof value === 'bigint' ? String(value) : value));
  const lines = [`row ${brief(rows[0])} (chain: ${await onChain(hash)})`];
  for (const version of versions as Array<Record<string, unknown>>) lines.push(`version ${brief(version)} (chain: ${await onChain(String(version.tx_hash))})`);
  return `\n    ${lines.join('\n    ').slice(0, 3000)}`;
}

const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`);
const quiet = (line: string) => { if (values.verbose) log(line); };

log(`chaos: seed ${seeds.join(', ')}, ${schedules} schedule(s) of ${minutes} min${values.path ? `, path ${values.path}` : ''}`);
const fleet: ChaosFleet = await startChaosFleet(log);
log('fleet up');
let number = 0;
let seed = seeds[0]!;
const drawn = new Map<string, number>();
const applied = new Map<string, number>();
/** Moves left pending within their window, across the run's schedules (checker.ts). */
const pending: PendingMoves = new Map();
let exitCode = 0;
try {
  for (const next of seeds) {
    seed = next;
    number = 0;
    await fc.assert(fc.asyncProperty(scheduleArbitrary(windowMs), async (schedule: Schedule) => {
      number++;
      for (const fault of schedule.faults) drawn.set(fault.kind, (drawn.get(fault.kind) ?? 0) + 1);
      log(`schedule ${number}:\n${describeSchedule(schedule)}`);
      const prepared = await prepareWorkload(fleet, schedule);
      await fleet.setMining(schedule.family);
      log(`schedule ${number}: window opens (${prepared.length} operations)`);
      const [records, faults] = await Promise.all([runWorkload(prepared, quiet), runNemesis(fleet, schedule, log)]);
      for (const [kind, count] of faults) applied.set(kind, (applied.get(kind) ?? 0) + count);
      log(`schedule ${number}: healing`);
      const violations: Violation[] = [];
      // A fleet that does not come back (an instance never ready) is a violation of its own; the checks still run.
      await fleet.heal().catch((error: unknown) => violations.push({ message: `the heal: ${(error as Error).message.slice(0, 400)}` }));
      // Quiet: every journaled transaction sent and recorded as the chain has it, no nonce gap on any
      // lane, every authorization ended, the records agree with the chain, conservation (rig.ts).
      await fleet.setMining('interval');
      try {
        await assertInvariants({ operator: fleet.operator });
      } catch (error) {
        violations.push({ message: `after the heal: ${(error as Error).message.replace(/\s+/g, ' ').slice(0, 400)}${await journalDetail(fleet, (error as Error).message)}` });
      }
      const checked = await checkRecords(fleet, records, started, pending);
      violations.push(...checked.violations);
      for (const note of checked.notes) log(`note: ${note}`);
      const outcomes = records.flatMap((r) => r.moves).reduce<Record<string, number>>((n, m) => ({ ...n, [m.outcome]: (n[m.outcome] ?? 0) + 1 }), {});
      log(`schedule ${number}: ${records.length} operations, moves ${JSON.stringify(outcomes)}, ${fleet.receiver.received.length} webhooks received so far; ${violations.length} violation(s)`);
      if (violations.length > 0) {
        for (const v of violations) log(`VIOLATION${v.op ? ` in ${v.op}` : ''}: ${v.message}`);
        for (const instance of fleet.instances) log(`${instance.name}'s log (tail):\n${instance.server?.output().slice(-3000) ?? ''}`);
        if (values.logs) {
          mkdirSync(values.logs, { recursive: true });
          for (const instance of fleet.instances) writeFileSync(join(values.logs, `${seed}-${number}-${instance.name}.log`), instance.server?.output() ?? '');
          log(`the instances' whole logs are in ${values.logs}`);
        }
        throw new Error(failureReport({ seed, number, minutes, path: values.path }, schedule, violations));
      }
    }), {
      seed, numRuns: schedules, ...(values.path && { path: values.path }),
      // One schedule is minutes of a fleet: no shrinking unless asked for by replaying a path.
      endOnFailure: true, includeErrorInReport: true,
    });
    // The totals so far on every seed's line: a soak stopped between seeds still says what it drew.
    log(`chaos: seed ${seed}: ${schedules} schedule(s), 0 violations; so far faults drawn ${JSON.stringify(Object.fromEntries(drawn))}, applied ${JSON.stringify(Object.fromEntries(applied))}`);
  }
  log(`chaos: seed ${seeds.join(', ')}: ${schedules} schedule(s) each, 0 violations; faults drawn ${JSON.stringify(Object.fromEntries(drawn))}, applied ${JSON.stringify(Object.fromEntries(applied))}`);
} catch (error) {
  exitCode = 1;
  // fast-check's report, then the error the property threw (the seed, schedule, violations and operations).
  console.error((error as Error).message);
  if ((error as Error).cause) console.error(String((error as Error & { cause: Error }).cause.message ?? (error as Error).cause));
  // fast-check's report names the path too; the command is printed last, where a reader looks.
  console.error(`replay: ${replayCommand({ seed, number, minutes, path: values.path })}`);
} finally {
  await fleet.stop().catch((error: unknown) => console.error(`stopping the fleet: ${(error as Error).message}`));
}
log(`chaos: ${Math.round((Date.now() - started) / 1000)} s`);
process.exit(exitCode);
