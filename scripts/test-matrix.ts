/**
 * The payment and reward suites (every test/*.test.ts that starts its server with `startPaymentTest`,
 * or picks its store with `testStore()`)
 * on each pairing desk and store: `npm test` runs them on the in-process desk and SQLite, this runs
 * them again on the other combinations (VIXPAY_TEST_PAIRING, VIXPAY_TEST_STORE; see
 * test/support/payments.ts). Needs what `npm test` needs, Redis at 127.0.0.1:6379 and PostgreSQL at
 * VIXPAY_TEST_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/test).
 *
 *   npm run test:matrix                          # redis:sqlite, in-process:postgres, redis:postgres
 *   npm run test:matrix -- all                   # and in-process:sqlite
 *   npm run test:matrix -- redis:postgres        # one combination (pairing:store)
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const pairings = ['in-process', 'redis'] as const;
const stores = ['sqlite', 'postgres'] as const;
const combinations = pairings.flatMap((pairing) => stores.map((store) => `${pairing}:${store}`));
const byDefault = combinations.filter((c) => c !== 'in-process:sqlite');

const args = process.argv.slice(2);
const chosen = args.length === 0 ? byDefault : args.includes('all') ? combinations : args;
for (const c of chosen) {
  if (!combinations.includes(c)) {
    console.error(`test:matrix: unknown combination "${c}" (pairing:store, one of ${combinations.join(', ')}, or all)`);
    process.exit(2);
  }
}

const testDir = path.join(projectRoot, 'test');
const suites = readdirSync(testDir)
  .filter((name) => name.endsWith('.test.ts') && /startPaymentTest\(|testStore\(\)/.test(readFileSync(path.join(testDir, name), 'utf8')))
  .sort()
  .map((name) => path.join('test', name));
if (suites.length === 0) {
  console.error('test:matrix: no suite uses startPaymentTest');
  process.exit(2);
}

const results: Array<{ combination: string; ok: boolean; seconds: number }> = [];
for (const combination of chosen) {
  const [pairing, store] = combination.split(':') as [string, string];
  console.log(`\n== payment suites on the ${pairing} pairing desk and ${store}: ${suites.join(' ')}\n`);
  const started = Date.now();
  const run = spawnSync(process.execPath, ['--test', '--test-concurrency=1', '--test-force-exit', '--test-timeout=300000', ...suites], {
    cwd: projectRoot,
    stdio: 'inherit',
    env: { ...process.env, VIXPAY_TEST_PAIRING: pairing, VIXPAY_TEST_STORE: store },
  });
  results.push({ combination, ok: run.status === 0, seconds: Math.round((Date.now() - started) / 1000) });
}

console.log('\n== test:matrix');
for (const r of results) console.log(`${r.ok ? 'pass' : 'FAIL'}  ${r.combination}  (${r.seconds} s)`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
