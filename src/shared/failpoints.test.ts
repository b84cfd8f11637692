import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { ConfigError, loadConfig } from '../config/config.ts';
import { armFaults, disarmFaults, failpoint, FailpointError, onChainNodeCrash, parseFailpoints } from './failpoints.ts';

test('FAILPOINTS are parsed once, by name, and a typo is a configuration error', () => {
  const config = loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfer=crash, rest-pay.before-answer=error' });
  assert.deepEqual(Object.fromEntries(config.failpoints), { 'payment.after-transfer': 'crash', 'rest-pay.before-answer': 'error' });
  assert.equal(loadConfig({}).failpoints.size, 0);
  assert.throws(() => loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfr=crash' }), (e: ConfigError) => /FAILPOINTS: unknown failpoint "payment.after-transfr"/.test(e.message));
  assert.throws(() => loadConfig({ VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-transfer=sleep' }), (e: ConfigError) => /FAILPOINTS: failpoint entry/.test(e.message));
});

test('an armed error failpoint throws at its step; others and unarmed ones do nothing', () => {
  try {
    failpoint('payment.after-transfer');
    armFaults(parseFailpoints('payment.after-transfer=error'));
    assert.throws(() => failpoint('payment.after-transfer'), FailpointError);
    failpoint('payment.after-claim');
    armFaults(new Map());
    assert.throws(() => failpoint('payment.after-transfer'), FailpointError, 'an empty configuration does not disarm');
  } finally {
    disarmFaults();
  }
  failpoint('payment.after-transfer');
});

test('an armed crash failpoint kills its process with SIGKILL at once', () => {
  const script = `import { armFaults, failpoint, parseFailpoints } from './src/shared/failpoints.ts';
armFaults(parseFailpoints('relay.after-journal=crash'));
console.log('before');
failpoint('relay.after-journal');
console.log('after');`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.equal(run.signal, 'SIGKILL');
  assert.match(run.stdout, /before/);
  assert.doesNotMatch(run.stdout, /after/);
  assert.match(run.stderr, /failpoint relay.after-journal: crash/);
});

test('a crash-chain failpoint kills the chain node once and goes on', () => {
  let kills = 0;
  try {
    armFaults(parseFailpoints('relay.after-broadcast=crash-chain'));
    assert.throws(() => failpoint('relay.after-broadcast'), /runs no chain node/, 'without a chain node to kill, it says so');
    armFaults(parseFailpoints('relay.after-broadcast=crash-chain'));
    onChainNodeCrash(() => { kills++; });
    failpoint('relay.after-broadcast');
    failpoint('relay.after-broadcast');
    assert.equal(kills, 1);
  } finally {
    disarmFaults();
  }
});
