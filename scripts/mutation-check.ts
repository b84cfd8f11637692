/**
 * The mutation check: each switch of VIXPAY_MUTATIONS (src/shared/failpoints.ts) breaks one guarantee
 * on purpose; the fault-suite tests that prove that guarantee must then FAIL. Runs each group of
 * tests first as it is (it must pass, or a failure proves nothing) and then with its switch on (it
 * must fail), and prints a table. Exit 0 only when every switch is caught. docs/reliability.md
 * records the last result.
 *
 *   npm run test:mutations                              # every switch
 *   npm run test:mutations -- skip-journal-replay       # one switch
 *   npm run test:mutations -- --no-baseline             # skip the unmutated runs
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mutationNames, type MutationName } from '../src/shared/failpoints.ts';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

interface Check {
  mutation: MutationName;
  /** The guarantee the switch breaks. */
  breaks: string;
  files: string[];
  /** --test-name-pattern: the tests of those files that prove the guarantee. */
  pattern: string;
}

const checks: Check[] = [
  {
    mutation: 'skip-temp-key-consumption', breaks: 'no replay: a transfer\'s temp key is used up with its reservation',
    files: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'token API transfer',
  },
  {
    mutation: 'skip-authorization-cancellation', breaks: 'a transfer answered failed leaves nothing signed usable',
    files: ['test/faults/skipped-transfer.test.ts'], pattern: 'skipped on chain',
  },
  {
    mutation: 'skip-journal-replay', breaks: 'durability across kill -9: journaled transactions are finished after a crash',
    files: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'settlement batch',
  },
  {
    mutation: 'rebuild-at-current-time', breaks: 'a crashed chain node\'s lost blocks are mined again in their order and at their times',
    files: ['test/faults/chain-node-crash.test.ts'], pattern: 'rebuilt from the journal',
  },
  {
    mutation: 'drop-outbox-write', breaks: 'the webhook outbox is written with the state change it reports',
    files: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'payment.after-approve',
  },
];

const args = process.argv.slice(2);
const baseline = !args.includes('--no-baseline');
const chosen = args.filter((a) => !a.startsWith('--'));
for (const name of chosen) {
  if (!(mutationNames as readonly string[]).includes(name)) {
    console.error(`test:mutations: unknown switch "${name}" (one of ${mutationNames.join(', ')})`);
    process.exit(2);
  }
}
const selected = checks.filter((c) => chosen.length === 0 || chosen.includes(c.mutation));
const missing = mutationNames.filter((name) => !checks.some((c) => c.mutation === name));
if (missing.length > 0) {
  console.error(`test:mutations: no check for ${missing.join(', ')}`);
  process.exit(2);
}

function runTests(check: Check, mutation: string | undefined): { passed: boolean; failed: number; seconds: number } {
  const started = Date.now();
  const run = spawnSync(process.execPath, [
    '--test', '--test-concurrency=1', '--test-force-exit', '--test-timeout=600000', `--test-name-pattern=${check.pattern}`, ...check.files,
  ], { cwd: projectRoot, encoding: 'utf8', env: { ...process.env, VIXPAY_MUTATIONS: mutation ?? '' }, maxBuffer: 64 * 1024 * 1024 });
  const output = `${run.stdout}${run.stderr}`;
  const failed = Number(/^ℹ fail (\d+)/m.exec(output)?.[1] ?? '0');
  const ran = Number(/^ℹ pass (\d+)/m.exec(output)?.[1] ?? '0') + failed;
  if (ran === 0) {
    console.error(output.slice(-3000));
    throw new Error(`test:mutations: no test of ${check.files.join(' ')} matches "${check.pattern}"`);
  }
  if (mutation === undefined && run.status !== 0) console.error(output.slice(-5000));
  return { passed: run.status === 0, failed, seconds: Math.round((Date.now() - started) / 1000) };
}

const rows: string[] = [];
let allCaught = true;
for (const check of selected) {
  console.log(`\n== ${check.mutation}: ${check.files.join(' ')} --test-name-pattern="${check.pattern}"`);
  if (baseline) {
    const plain = runTests(check, undefined);
    console.log(`   without the switch: ${plain.passed ? 'pass' : 'FAIL'} (${plain.seconds} s)`);
    if (!plain.passed) {
      allCaught = false;
      rows.push(`| \`${check.mutation}\` | ${check.breaks} | \`${check.files.join(' ')}\` "${check.pattern}" | **fail without the switch**: proves nothing |`);
      continue;
    }
  }
  const mutated = runTests(check, check.mutation);
  const caught = !mutated.passed;
  allCaught &&= caught;
  console.log(`   with the switch: ${caught ? `caught (${mutated.failed} failing)` : 'NOT CAUGHT'} (${mutated.seconds} s)`);
  rows.push(`| \`${check.mutation}\` | ${check.breaks} | \`${check.files.join(' ')}\` "${check.pattern}" | ${caught ? `caught: ${mutated.failed} failing` : '**not caught**'} |`);
}

console.log('\n== test:mutations\n');
console.log('| switch | guarantee it breaks | tests | with the switch on |');
console.log('|---|---|---|---|');
for (const row of rows) console.log(row);
process.exit(allCaught ? 0 : 1);
