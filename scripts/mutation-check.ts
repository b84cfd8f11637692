/**
 * The mutation check: each check breaks one guarantee on purpose with a one-line edit of a file
 * under src/, and the tests that prove that guarantee must then FAIL. Nothing of it is in src/: the
 * script copies the project into a temporary directory (node_modules linked), applies the one edit
 * there, runs the named tests there and removes the copy; the working tree is never modified.
 * With a baseline (the default) the same tests first run on an unmutated copy: they must pass, or a
 * failure proves nothing. Prints a table; exit 0 only when every mutation is caught.
 * docs/reliability.md "Mutation check" records the last result.
 *
 *   npm run test:mutations                                   # every check, with baselines
 *   npm run test:mutations -- markapproved-any-status        # some checks, by name
 *   npm run test:mutations -- --ci --no-baseline             # the fast set CI runs (after npm test)
 *   npm run test:mutations -- --list                         # every check, as docs/reliability.md shows it
 *   npm run test:mutations -- --check                        # only that every edit still applies (no test run)
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = fileURLToPath(new URL('..', import.meta.url));

interface Check {
  name: string;
  /** The guarantee the mutation breaks. */
  breaks: string;
  /**
   * A file under src/, the text found there exactly once (with lines of context if one line is not
   * unique), and what replaces it: the same lines with exactly one changed.
   */
  file: string;
  find: string;
  replace: string;
  /** The test files and --test-name-pattern of the tests that prove the guarantee. */
  tests: string[];
  pattern: string;
  /** Set for the test run (e.g. VIXPAY_TEST_STORE=postgres). */
  env?: Record<string, string>;
  /** `ci`: the fast set .ci/run runs (each under a minute); `full`: only in a whole run (the slow fault cases). */
  set: 'ci' | 'full';
}

const checks: Check[] = [
  {
    name: 'skip-temp-key-consumption', set: 'full',
    breaks: 'no replay: a transfer\'s temp key is used up with its reservation',
    file: 'src/store/authorization-repository.ts',
    find: 'if (hooks.consumeTempKey !== undefined) {',
    replace: 'if (false && hooks.consumeTempKey !== undefined) {',
    tests: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'kill -9 at transfer.after-settle: ',
  },
  {
    name: 'skip-authorization-cancellation', set: 'ci',
    breaks: 'a transfer answered failed leaves nothing signed usable (its EIP-3009 authorization is cancelled on chain: a network without EIP-7702)',
    file: 'src/wallet/resolve-authorization.ts',
    find: 'const account = await deps.repo.findAccount(record.fromAddress);',
    replace: 'return { status: \'open\' }; const account = await deps.repo.findAccount(record.fromAddress);',
    tests: ['src/wallet/transfer.test.ts'], pattern: 'is cancelled on chain and refused',
  },
  {
    name: 'skip-account-nonce-cancellation', set: 'ci',
    breaks: 'a transfer answered failed leaves nothing signed usable (on the account path, its nonce is cancelled at the account)',
    file: 'src/wallet/resolve-account-transfer.ts',
    find: 'const holder = keysOf(deps).account(stored.privateKeyEnc, account);',
    replace: 'return { status: \'open\' }; const holder = keysOf(deps).account(stored.privateKeyEnc, account);',
    tests: ['test/faults/skipped-transfer.test.ts'], pattern: 'skipped on chain',
  },
  {
    name: 'skip-journal-replay', set: 'full',
    breaks: 'durability across kill -9: journaled transactions are finished after a crash (recovery at start, stale rebroadcast)',
    file: 'src/chain/relayer-recovery.ts',
    find: '.filter((tx) => stale === undefined || tx.createdAt < stale.before);',
    replace: '.filter(() => false);',
    tests: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'kill -9 of the server at relay.after-journal',
  },
  {
    name: 'rebuild-at-current-time', set: 'full',
    breaks: 'a crashed chain node\'s lost blocks are mined again in their order and at their times',
    file: 'src/chain/relayer-recovery.ts',
    find: 'let finishedAll = chains[network].managed',
    replace: 'let finishedAll = false',
    tests: ['test/faults/chain-node-crash.test.ts'], pattern: 'rebuilt from the journal',
  },
  {
    name: 'drop-outbox-write', set: 'ci',
    breaks: 'the webhook outbox is written with the state change it reports',
    file: 'src/store/webhook-repository.ts',
    find: 'const id = `evt_${randomUUID().replaceAll(\'-\', \'\')}`;',
    replace: 'const id = `evt_${randomUUID().replaceAll(\'-\', \'\')}`; return id;',
    tests: ['test/faults/crash-at-failpoints.test.ts'], pattern: 'payment.after-approve',
  },
  {
    name: 'approve-any-status', set: 'ci',
    breaks: 'a payment is approved once, only while pending (one approval number, one event)',
    file: 'src/store/payment-repository.ts',
    find: 'approval_date: approval.approvalDate, updated_at: now,\n      }).where(\'id\', \'=\', id).where(\'status\', \'=\', \'pending\').executeTakeFirst()));',
    replace: 'approval_date: approval.approvalDate, updated_at: now,\n      }).where(\'id\', \'=\', id).executeTakeFirst()));',
    tests: ['src/store/payment-repository.test.ts'], pattern: 'approved once',
  },
  {
    name: 'outbox-outside-transaction', set: 'ci',
    breaks: 'a state change and its webhook outbox row are committed together or not at all',
    file: 'src/store/webhook-repository.ts',
    find: '  if (!event) return change(db);',
    replace: '  if (!event || true) { const changed = await change(db); if (changed && event) await appendWebhookEvent(db, event, now); return changed; }',
    tests: ['src/store/payment-repository.test.ts'], pattern: 'one transaction',
  },
  {
    name: 'reward-receipt-any-store', set: 'ci',
    breaks: 'isolation: a store reads only its own reward-claim receipts',
    file: 'src/store/receipt-repository.ts',
    find: 'const row = await rewardQuery().where(\'tid\', \'=\', tid).where(\'id\', \'=\', rewardId).executeTakeFirst();',
    replace: 'const row = await rewardQuery().where(\'id\', \'=\', rewardId).executeTakeFirst();',
    tests: ['test/receipts.test.ts'], pattern: 'reward claim receipt is its store',
  },
  {
    name: 'reserve-expired-temp-key', set: 'ci',
    breaks: 'a temp key past its expiry is never spent (the reservation\'s own check, behind the wallet\'s)',
    file: 'src/store/authorization-repository.ts',
    find: '.where(\'key_hash\', \'=\', hooks.consumeTempKey).where(\'used_at\', \'is\', null).where(\'expires_at\', \'>\', record.createdAt)',
    replace: '.where(\'key_hash\', \'=\', hooks.consumeTempKey).where(\'used_at\', \'is\', null)',
    tests: ['src/store/authorization-repository.test.ts'], pattern: 'expired temp key',
  },
  {
    name: 'no-account-row-lock', set: 'ci',
    breaks: 'concurrent reservations of one account on PostgreSQL are decided one at a time (no overdraft of held funds)',
    file: 'src/store/authorization-repository.ts',
    find: 'await trx.updateTable(\'accounts\').set((eb) => ({ address: eb.ref(\'address\') }))',
    replace: 'await trx.selectFrom(\'accounts\').select(\'address\')',
    tests: ['src/store/authorization-repository.test.ts'], pattern: 'concurrent reservations',
  },
  {
    name: 'no-account-row-lock-platform', set: 'full',
    breaks: 'the same, end to end: racing token API transfers on PostgreSQL',
    file: 'src/store/authorization-repository.ts',
    find: 'await trx.updateTable(\'accounts\').set((eb) => ({ address: eb.ref(\'address\') }))',
    replace: 'await trx.selectFrom(\'accounts\').select(\'address\')',
    tests: ['test/money-safety.test.ts'], pattern: '40 concurrent 1-VIXP transfers', env: { VIXPAY_TEST_STORE: 'postgres' },
  },
  {
    name: 'payment-pending-as-refused', set: 'ci',
    breaks: 'a payment whose transfer was sent but not mined stays pending (never failed while it can still execute)',
    file: 'src/payments/run-payment.ts',
    find: 'if (result.status === \'refused\') transferred = false;',
    replace: 'if (result.status !== \'settled\') transferred = false;',
    tests: ['test/money-safety.test.ts'], pattern: 'never approved while unconfirmed',
  },
  {
    name: 'refund-pending-as-refused', set: 'ci',
    breaks: 'a refund sent but not mined keeps its amount reserved (no second refund of it)',
    file: 'src/payments/cancel-payment.ts',
    find: 'if (refund.status === \'refused\') await deps.payments.failCancellation(cancellationId, deps.clock());',
    replace: 'if (refund.status !== \'settled\') await deps.payments.failCancellation(cancellationId, deps.clock());',
    tests: ['test/money-safety.test.ts'], pattern: 'a refund sent but not mined',
  },
  {
    name: 'payout-pending-as-refused', set: 'ci',
    breaks: 'a reward payout sent but not mined keeps the reward claiming (no second payout)',
    file: 'src/rewards/claim-reward.ts',
    find: 'if (payout.status === \'refused\') await deps.rewards.transition(reward.id, \'claiming\', \'issued\', { userAddress: null }, deps.clock());',
    replace: 'if (payout.status !== \'settled\') await deps.rewards.transition(reward.id, \'claiming\', \'issued\', { userAddress: null }, deps.clock());',
    tests: ['test/money-safety.test.ts'], pattern: 'a reward payout sent but not mined',
  },
  {
    name: 'give-back-pending-as-refused', set: 'ci',
    breaks: 'a reward give-back sent but not mined keeps the reward canceling (no second give-back)',
    file: 'src/rewards/cancel-reward.ts',
    find: 'if (giveBack.status === \'refused\') await deps.rewards.transition(reward.id, \'canceling\', \'claimed\', {}, deps.clock());',
    replace: 'if (giveBack.status !== \'settled\') await deps.rewards.transition(reward.id, \'canceling\', \'claimed\', {}, deps.clock());',
    tests: ['test/money-safety.test.ts'], pattern: 'a reward give-back sent but not mined',
  },
  {
    name: 'refund-without-compare-and-set', set: 'ci',
    breaks: 'refunds never exceed what was paid: the refunded total is reserved by compare-and-set',
    file: 'src/store/payment-repository.ts',
    find: '.where(\'id\', \'=\', paymentId).where(\'refunded_amount\', \'=\', expected).executeTakeFirst())) return false;',
    replace: '.where(\'id\', \'=\', paymentId).executeTakeFirst())) return false;',
    tests: ['src/store/payment-repository.test.ts', 'test/money-safety.test.ts'], pattern: 'compare-and-set|racing for a payment of 6',
  },
  {
    name: 'live-payment-as-stale', set: 'ci',
    breaks: 'a tran_no whose payment is running answers 13 (in progress) to a retry, never a second payment',
    file: 'src/payments/run-payment.ts',
    find: 'deps.clock() - existing.updatedAt > paymentStaleAfterMs(deps)',
    replace: 'true',
    tests: ['test/payments.test.ts'], pattern: 'in progress|told 13',
  },
  {
    name: 'x402-amount-any-spelling', set: 'ci',
    breaks: 'x402 numbers: one canonical uint256 spelling, every other refused (never read as a nearby value)',
    file: 'src/shared/uint256.ts',
    find: 'const canonicalDecimal = /^(0|[1-9][0-9]{0,77})$/;',
    replace: 'const canonicalDecimal = /^\\s*\\+?[0-9]{1,78}\\s*$/;',
    tests: ['src/shared/uint256.test.ts'], pattern: 'other spellings',
  },
  {
    name: 'x402-zero-amount', set: 'full',
    breaks: 'no gas for nothing: an x402 amount of 0 is refused at verify and settle',
    file: 'src/x402/verify-payment.ts',
    find: 'if (bound.amount === 0n || authorization.value === 0n) return refused(',
    replace: 'if (false && (bound.amount === 0n || authorization.value === 0n)) return refused(',
    tests: ['test/x402-hostile.test.ts'], pattern: 'zero amount',
  },
  {
    name: 'x402-nonce-global', set: 'full',
    breaks: 'an x402 nonce is its authorizer\'s: another payer, or another network, may use it',
    file: 'src/x402/settle-payment.ts',
    find: 'const id = authorizationKey(network, bound.asset, authorization.from, authorization.nonce);',
    replace: 'const id = authorization.nonce;',
    tests: ['test/x402-hostile.test.ts'], pattern: 'nonce is the authorizer',
  },
  {
    name: 'x402-valid-before-bigint', set: 'full',
    breaks: 'x402 validBefore stored exactly (any uint256), so the chain gets the signed value and the sweep reads every row',
    file: 'src/store/migrations/0022-x402-authorizer-nonces.ts',
    find: `    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql\`insert into x402_settlements_0022`,
    replace: `    .addColumn('amount', 'text', (c) => c.notNull())
    .addColumn('valid_before', 'bigint', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text')
    .addColumn('error_reason', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql\`insert into x402_settlements_0022`,
    tests: ['test/x402-hostile.test.ts'], pattern: 'validBefore above 2\\^53',
  },
  {
    name: 'wallet-key-kept-as-hex', set: 'full',
    breaks: 'with KEY_CUSTODY=pkcs11 no wallet key is kept in the process (a heap snapshot of the running platform holds none)',
    file: 'src/chain/token-wrapped-keys.ts',
    find: '        const label = chosen ?? newestLabel(session) ?? walletWrappingKeyLabel;',
    replace: '        const label = chosen ?? newestLabel(session) ?? walletWrappingKeyLabel; ((globalThis as { kept?: string[] }).kept ??= []).push(bytesToHex(privateKey));',
    tests: ['test/key-custody.test.ts'], pattern: 'no wallet key in the heap',
  },
  {
    name: 'rewrap-without-compare-and-swap', set: 'full',
    breaks: 'keys migrate replaces a wallet\'s stored key only where it is still the form it read (exactly once beside another run)',
    file: 'src/store/wallet-repository.ts',
    find: ".where('address', '=', address).where('private_key_enc', '=', from).executeTakeFirst();",
    replace: ".where('address', '=', address).executeTakeFirst();",
    tests: ['src/wallet/rewrap-wallet-keys.test.ts'], pattern: 'another run moved',
  },
];

function usage(message: string): never {
  console.error(`test:mutations: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
const known = new Set(['--no-baseline', '--ci', '--list', '--check']);
for (const flag of args.filter((a) => a.startsWith('--'))) if (!known.has(flag)) usage(`unknown option ${flag} (${[...known].join(', ')})`);
const baseline = !args.includes('--no-baseline');
const chosen = args.filter((a) => !a.startsWith('--'));
for (const name of chosen) if (!checks.some((c) => c.name === name)) usage(`unknown check "${name}" (one of ${checks.map((c) => c.name).join(', ')})`);
const selected = checks.filter((c) => (chosen.length === 0 || chosen.includes(c.name)) && (!args.includes('--ci') || c.set === 'ci'));
if (args.includes('--list')) {
  // The table docs/reliability.md shows.
  console.log('| Mutation | Set | Edit (one line) | Guarantee it breaks | Tests that must fail |');
  console.log('|---|---|---|---|---|');
  for (const c of checks) {
    const env = c.env ? ` (${Object.entries(c.env).map(([k, v]) => `${k}=${v}`).join(' ')})` : '';
    console.log(`| \`${c.name}\` | ${c.set} | \`${c.file}\` | ${c.breaks} | \`${c.tests.join('` `')}\` "${c.pattern.replaceAll('|', '\\|')}"${env} |`);
  }
  process.exit(0);
}
if (new Set(checks.map((c) => c.name)).size !== checks.length) usage('two checks share a name');

/** The file's text with the check's one edit; throws unless `find` occurs exactly once. */
function mutatedText(check: Check): string {
  // `find` may carry lines of context to be unique; exactly one of its lines is changed.
  const before = check.find.split('\n');
  const after = check.replace.split('\n');
  if (before.length !== after.length || before.filter((line, i) => line !== after[i]).length !== 1) {
    throw new Error(`${check.name}: a mutation changes exactly one line`);
  }
  if (!check.file.startsWith('src/')) throw new Error(`${check.name}: ${check.file} is not under src/`);
  const text = readFileSync(path.join(projectRoot, check.file), 'utf8');
  const count = text.split(check.find).length - 1;
  if (count !== 1) throw new Error(`${check.name}: "${check.find}" occurs ${count} times in ${check.file} (expected exactly once): the check must be updated to the code`);
  return text.replace(check.find, () => check.replace);
}

/** What is not copied: the repository, the installed packages (linked instead) and what .gitignore keeps out. */
const notCopied = new Set(['.git', 'node_modules', 'data', '.tmp']);

/** A copy of the project (every file the tests may read: sources, tests, docs, contracts, proto, …). */
function copyProject(): string {
  const copy = mkdtempSync(path.join(tmpdir(), 'vixpay-mutation-'));
  for (const entry of readdirSync(projectRoot)) {
    if (notCopied.has(entry) || entry.endsWith('.log')) continue;
    cpSync(path.join(projectRoot, entry), path.join(copy, entry), { recursive: true });
  }
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(copy, 'node_modules'), 'dir');
  return copy;
}

interface Run { passed: boolean; failed: number; failing: string[]; seconds: number; output: string }

/** Runs the check's tests in a fresh copy, mutated or not, and removes the copy. */
function runTests(check: Check, mutate: boolean): Run {
  const started = Date.now();
  const copy = copyProject();
  try {
    if (mutate) writeFileSync(path.join(copy, check.file), mutatedText(check));
    const env: NodeJS.ProcessEnv = { ...process.env, ...check.env };
    const run = spawnSync(process.execPath, [
      '--test', '--test-concurrency=1', '--test-force-exit', '--test-timeout=600000', `--test-name-pattern=${check.pattern}`, ...check.tests,
    ], { cwd: copy, encoding: 'utf8', env, maxBuffer: 64 * 1024 * 1024 });
    // Ctrl-C reaches the test run too: stop here (the copy is removed below), not at the next check.
    if (run.signal === 'SIGINT' || run.signal === 'SIGTERM') {
      rmSync(copy, { recursive: true, force: true });
      process.exit(130);
    }
    const output = `${run.stdout}${run.stderr}`;
    const failed = Number(/^ℹ fail (\d+)/m.exec(output)?.[1] ?? '0');
    const ran = Number(/^ℹ pass (\d+)/m.exec(output)?.[1] ?? '0') + failed;
    if (ran === 0) {
      console.error(output.slice(-3000));
      throw new Error(`test:mutations: no test of ${check.tests.join(' ')} matches "${check.pattern}"`);
    }
    if (!mutate && run.status !== 0) console.error(output.slice(-5000));
    // The spec reporter's "✖ name (time)" lines, without the file-level summary lines.
    const failing = [...new Set([...output.matchAll(/^\s*✖ (.+?) \([\d.]+m?s\)$/gm)].map((m) => m[1]!))]
      .filter((name) => !check.tests.some((file) => name.endsWith(file)) && name !== 'failing tests:');
    return { passed: run.status === 0, failed, failing, seconds: Math.round((Date.now() - started) / 1000), output };
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

// Every selected mutation applies to the code as it is, before anything runs.
for (const check of selected) mutatedText(check);
if (args.includes('--check')) {
  console.log(`test:mutations: the ${selected.length} edits apply to the code as it is`);
  process.exit(0);
}

const rows: string[] = [];
let allCaught = true;
const total = Date.now();
for (const check of selected) {
  console.log(`\n== ${check.name} (${check.file}): ${check.tests.join(' ')} --test-name-pattern="${check.pattern}"`);
  let baselineSeconds = 0;
  if (baseline) {
    const plain = runTests(check, false);
    baselineSeconds = plain.seconds;
    console.log(`   unmutated: ${plain.passed ? 'pass' : 'FAIL'} (${plain.seconds} s)`);
    if (!plain.passed) {
      allCaught = false;
      rows.push(`| \`${check.name}\` | \`${check.tests.join(' ')}\` "${check.pattern.replaceAll('|', '\\|')}" | **fails unmutated**: proves nothing | ${plain.seconds} s |`);
      continue;
    }
  }
  let mutated: Run;
  try {
    mutated = runTests(check, true);
  } catch (error) {
    // The file changed while the run went on (its text is checked once more at each copy).
    allCaught = false;
    console.error(`   ${(error as Error).message}`);
    rows.push(`| \`${check.name}\` | \`${check.tests.join(' ')}\` "${check.pattern.replaceAll('|', '\\|')}" | **edit no longer applies** | — |`);
    continue;
  }
  // Caught only by a failing test: a file that fails to load (a syntax error, a missing module) proves nothing.
  const broken = !mutated.passed && mutated.failing.length === 0;
  if (broken) console.error(mutated.output.slice(-3000));
  const caught = !mutated.passed && !broken;
  allCaught &&= caught;
  const failing = mutated.failing.slice(0, 3).map((name) => `"${name.slice(0, 90)}"`).join(', ');
  const verdict = caught ? `caught: ${mutated.failed} failing` : broken ? '**no test ran to its end** (see the output)' : '**not caught**';
  console.log(`   mutated: ${caught ? `caught (${mutated.failed} failing: ${failing})` : verdict} (${mutated.seconds} s)`);
  const seconds = baseline ? `${baselineSeconds} + ${mutated.seconds} s` : `${mutated.seconds} s`;
  rows.push(`| \`${check.name}\` | \`${check.tests.join(' ')}\` "${check.pattern.replaceAll('|', '\\|')}" | ${verdict} | ${seconds} |`);
}

console.log(`\n== test:mutations: ${selected.length} checks in ${Math.round((Date.now() - total) / 1000)} s${baseline ? '' : ' (no baseline)'}\n`);
console.log(`| mutation | tests | mutated | time${baseline ? ' (unmutated + mutated)' : ''} |`);
console.log('|---|---|---|---|');
for (const row of rows) console.log(row);
process.exit(allCaught ? 0 : 1);
