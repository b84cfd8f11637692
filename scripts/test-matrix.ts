/**
 * The suites again on the other pairing desks and stores than `npm test`'s (the in-process desk and
 * SQLite):
 *
 * - `pairing:store` (redis:sqlite, in-process:postgres, redis:postgres, in-process:sqlite): the payment
 *   and reward suites (every test/*.test.ts that starts its server with `startPaymentTest`, or picks
 *   its store with `testStore()`) on that desk and store (VIXPAY_TEST_PAIRING, VIXPAY_TEST_STORE; see
 *   test/support/payments.ts);
 * - `whole:postgres`: every test file of `npm run test:unit` (the same globs, read from package.json)
 *   with VIXPAY_TEST_STORE=postgres: each test platform, server process and CLI run on a fresh
 *   PostgreSQL schema of its own (test/support/stores.ts). Tests about the SQLite file itself skip
 *   there with a reason that starts `SQLite only:` (.ci/run accepts exactly those, by name).
 *
 * Needs what `npm test` needs, Redis at 127.0.0.1:6379 and PostgreSQL at VIXPAY_TEST_DATABASE_URL
 * (default postgres://postgres@127.0.0.1:5432/test).
 *
 *   npm run test:matrix                          # redis:sqlite, whole:postgres
 *   npm run test:matrix -- all                   # and in-process:postgres, in-process:sqlite
 *   npm run test:matrix -- redis:postgres        # one combination
 *   npm run test:matrix -- whole:postgres        # the whole suite on PostgreSQL (~6 min on 2 cores)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const pairings = ['in-process', 'redis'] as const;
const stores = ['sqlite', 'postgres'] as const;
const paymentCombinations = pairings.flatMap((pairing) => stores.map((store) => `${pairing}:${store}`));
const combinations = [...paymentCombinations, 'whole:postgres'];
// in-process:postgres is part of whole:postgres (the payment suites on the in-process desk).
// redis:postgres is left to `all`: the fleet tests (test/fleet.test.ts, test/faults/three-instances.test.ts)
// run instances on Redis and PostgreSQL together in every `npm test` and fault run.
const byDefault = ['redis:sqlite', 'whole:postgres'];

const args = process.argv.slice(2);
const chosen = args.length === 0 ? byDefault : args.includes('all') ? combinations : args;
for (const c of chosen) {
  if (!combinations.includes(c)) {
    console.error(`test:matrix: unknown combination "${c}" (one of ${combinations.join(', ')}, or all)`);
    process.exit(2);
  }
}

const testDir = path.join(projectRoot, 'test');
const paymentSuites = readdirSync(testDir)
  .filter((name) => name.endsWith('.test.ts') && /startPaymentTest\(|testStore\(\)/.test(readFileSync(path.join(testDir, name), 'utf8')))
  .sort()
  .map((name) => path.join('test', name));
if (paymentSuites.length === 0) {
  console.error('test:matrix: no suite uses startPaymentTest');
  process.exit(2);
}

// The whole suite: the globs `npm run test:unit` passes to node --test.
const unitScript: string = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')).scripts['test:unit'];
const wholeSuite = [...unitScript.matchAll(/"([^"]+\.test\.ts)"/g)].map((m) => m[1]!);
if (wholeSuite.length === 0) {
  console.error('test:matrix: no test globs in the test:unit script of package.json');
  process.exit(2);
}

const results: Array<{ combination: string; ok: boolean; seconds: number }> = [];
for (const combination of chosen) {
  const whole = combination.startsWith('whole:');
  const [pairing, store] = whole ? ['in-process', combination.slice('whole:'.length)] : combination.split(':') as [string, string];
  const files = whole ? wholeSuite : paymentSuites;
  console.log(whole
    ? `\n== the whole suite on ${store}: ${files.join(' ')}\n`
    : `\n== payment suites on the ${pairing} pairing desk and ${store}: ${files.join(' ')}\n`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-force-exit', '--test-timeout=300000', ...files], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, VIXPAY_TEST_PAIRING: pairing, VIXPAY_TEST_STORE: store },
  });
  results.push({ combination, ok: run.status === 0, seconds: Math.round((Date.now() - started) / 1000) });
}

console.log('\n== test:matrix');
for (const r of results) console.log(`${r.ok ? 'pass' : 'FAIL'}  ${r.combination}  (${r.seconds} s)`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
