/**
 * The suites again on the other pairing desks and stores than `npm test`'s (the in-process desk and
 * SQLite), but only the test files a switch can change (scripts/test-selection.ts): a file runs again
 * on PostgreSQL when what it imports or spawns, followed transitively, reaches code that reads
 * VIXPAY_TEST_STORE (test/support/stores.ts: the test platforms, server processes and CLI runs), and
 * on the Redis desk when it reaches code that reads VIXPAY_TEST_PAIRING (test/support/payments.ts). A
 * file that reaches neither would run exactly as in `npm test`. Nothing is listed by hand: a new test
 * that starts a platform is picked by its imports.
 *
 * - `redis:sqlite`: the files the pairing switch reaches, on the Redis desk;
 * - `in-process:postgres`: the files the store switch reaches, on PostgreSQL (each test platform,
 *   server process and CLI run on a fresh schema of its own, test/support/stores.ts). Tests about the
 *   SQLite file itself skip there with a reason that starts `SQLite only:` (.ci/run accepts exactly
 *   those, by name);
 * - `redis:postgres`: the files either switch reaches, on both; `in-process:sqlite` the same files as
 *   `npm test` runs them;
 * - `whole:postgres`: every test file of `npm run test:unit` (its globs, read from package.json) on
 *   PostgreSQL, picked or not.
 *
 * Needs what `npm test` needs, Redis at 127.0.0.1:6379 and PostgreSQL at VIXPAY_TEST_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test).
 *
 *   npm run test:matrix                          # redis:postgres
 *   npm run test:matrix -- all                   # and redis:sqlite, in-process:postgres, in-process:sqlite, whole:postgres
 *   npm run test:matrix -- redis:postgres        # one combination
 *   npm run test:matrix -- --list                # the files each combination runs, and why
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expandTestGlob, testsReaching } from './test-selection.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const pairings = ['in-process', 'redis'] as const;
const stores = ['sqlite', 'postgres'] as const;
const switchedCombinations = pairings.flatMap((pairing) => stores.map((store) => `${pairing}:${store}`));
const combinations = [...switchedCombinations, 'whole:postgres'];
// redis:postgres alone: each file either switch can change, once, with both switched
// (docs/decisions/testing.md).
const byDefault = ['redis:postgres'];

const args = process.argv.slice(2);
const listOnly = args.includes('--list');
const named = args.filter((a) => a !== '--list');
const chosen = named.length === 0 ? byDefault : named.includes('all') ? combinations : named;
for (const c of chosen) {
  if (!combinations.includes(c)) {
    console.error(`test:matrix: unknown combination "${c}" (one of ${combinations.join(', ')}, or all)`);
    process.exit(2);
  }
}

// The whole suite: the globs `npm run test:unit` passes to node --test.
const unitScript: string = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts['test:unit'];
const globs = [...unitScript.matchAll(/"([^"]+\.test\.ts)"/g)].map((m) => m[1]!);
// And its --test-concurrency: the matrix runs its files as `npm test` runs them.
const concurrency = /--test-concurrency=(\d+)/.exec(unitScript)?.[1] ?? '1';
const wholeSuite = globs.flatMap((glob) => expandTestGlob(projectRoot, glob));
if (wholeSuite.length === 0) {
  console.error('test:matrix: no test files match the globs of the test:unit script of package.json');
  process.exit(2);
}
const storeReach = testsReaching(projectRoot, wholeSuite, 'VIXPAY_TEST_STORE');
const pairingReach = testsReaching(projectRoot, wholeSuite, 'VIXPAY_TEST_PAIRING');
if (storeReach.size === 0 || pairingReach.size === 0) {
  console.error('test:matrix: no test reaches test/support/stores.ts or test/support/payments.ts: the selection is broken');
  process.exit(2);
}

function filesOf(combination: string): string[] {
  if (combination.startsWith('whole:')) return wholeSuite;
  const [pairing, store] = combination.split(':') as [string, string];
  return wholeSuite.filter((file) => (pairing === 'redis' && pairingReach.has(file)) || (store === 'postgres' && storeReach.has(file))
    || (pairing === 'in-process' && store === 'sqlite' && (pairingReach.has(file) || storeReach.has(file))));
}

if (listOnly) {
  for (const combination of chosen) {
    const files = filesOf(combination);
    console.log(`${combination}: ${files.length} of ${wholeSuite.length} test files`);
    for (const file of files) {
      const why = [storeReach.get(file) && `store via ${storeReach.get(file)}`, pairingReach.get(file) && `pairing via ${pairingReach.get(file)}`].filter(Boolean).join(', ');
      console.log(`  ${file}${why ? `  (${why})` : ''}`);
    }
  }
  process.exit(0);
}

const results: Array<{ combination: string; ok: boolean; seconds: number; files: number }> = [];
for (const combination of chosen) {
  const [pairing, store] = combination.startsWith('whole:') ? ['in-process', combination.slice('whole:'.length)] : combination.split(':') as [string, string];
  const files = filesOf(combination);
  console.log(`\n== ${combination}: ${files.length} of ${wholeSuite.length} test files on the ${pairing} pairing desk and ${store}: ${files.join(' ')}\n`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--test', `--test-concurrency=${concurrency}`, '--test-force-exit', '--test-timeout=300000', ...files], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, VIXPAY_TEST_PAIRING: pairing, VIXPAY_TEST_STORE: store },
  });
  results.push({ combination, ok: run.status === 0, seconds: Math.round((Date.now() - started) / 1000), files: files.length });
}

console.log('\n== test:matrix');
for (const r of results) console.log(`${r.ok ? 'pass' : 'FAIL'}  ${r.combination}  (${r.files} files, ${r.seconds} s)`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
