import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../config/config.ts';
import { createFaults, FailpointError, noFaults, parseFailpoints } from './failpoints.ts';

test('FAILPOINTS are parsed once, by name, and a typo is a configuration error', () => {
  const config = loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfer=crash, rest-pay.before-answer=error' });
  assert.deepEqual(Object.fromEntries(config.failpoints), { 'payment.after-transfer': 'crash', 'rest-pay.before-answer': 'error' });
  assert.equal(loadConfig({}).failpoints.size, 0);
  assert.throws(() => loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfr=crash' }), (e: ConfigError) => /FAILPOINTS: unknown failpoint "payment.after-transfr"/.test(e.message));
  assert.throws(() => loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfer=sleep' }), (e: ConfigError) => /FAILPOINTS: failpoint entry/.test(e.message));
});

test('an armed error failpoint throws at its step; others, and other platforms\' faults, do nothing', () => {
  const faults = createFaults(parseFailpoints('payment.after-transfer=error'));
  assert.throws(() => faults.at('payment.after-transfer'), FailpointError);
  assert.throws(() => faults.at('payment.after-transfer'), FailpointError, 'every time it is reached');
  faults.at('payment.after-claim');
  // Nothing is process-wide: another platform's faults, and the default, are not armed by it.
  createFaults(new Map()).at('payment.after-transfer');
  noFaults.at('payment.after-transfer');
  assert.equal(createFaults(new Map()), noFaults);
});

test('an armed crash failpoint kills its process with SIGKILL at once', () => {
  const script = `import { createFaults, parseFailpoints } from './src/shared/failpoints.ts';
const faults = createFaults(parseFailpoints('relay.after-journal=crash'));
console.log('before');
faults.at('relay.after-journal');
console.log('after');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.signal, 'SIGKILL');
  assert.match(run.stdout, /before/);
  assert.doesNotMatch(run.stdout, /after/);
  assert.match(run.stderr, /failpoint relay.after-journal: crash/);
});

test('a crash-chain failpoint kills the chain node once and goes on', () => {
  let kills = 0;
  const nodeless = createFaults(parseFailpoints('relay.after-broadcast=crash-chain'));
  assert.throws(() => nodeless.at('relay.after-broadcast'), /runs no chain node/, 'without a chain node to kill, it says so');
  const faults = createFaults(parseFailpoints('relay.after-broadcast=crash-chain'));
  faults.onChainNodeCrash(() => { kills++; });
  faults.at('relay.after-broadcast');
  faults.at('relay.after-broadcast');
  assert.equal(kills, 1);
});
