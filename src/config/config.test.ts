import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig, parseTrustProxy } from './config.ts';

test('TRUST_PROXY takes a hop count or proxy addresses/CIDRs, never "every hop"', () => {
  assert.equal(parseTrustProxy(undefined), false);
  assert.equal(parseTrustProxy('false'), false);
  assert.equal(parseTrustProxy('0'), false);
  assert.equal(parseTrustProxy('1'), 1);
  assert.equal(parseTrustProxy(' 2 '), 2);
  assert.deepEqual(parseTrustProxy('10.0.0.0/8, 192.168.1.7,::1,fd00::/8,loopback'), ['10.0.0.0/8', '192.168.1.7', '::1', 'fd00::/8', 'loopback']);
  assert.throws(() => parseTrustProxy('true'), /every hop/);
  assert.throws(() => parseTrustProxy('10.0.0.0/33'), /10\.0\.0\.0\/33/);
  assert.throws(() => parseTrustProxy('proxy.example'), /proxy\.example/);
  assert.throws(() => parseTrustProxy('1000'), /hop count/);
  assert.equal(loadConfig({ TRUST_PROXY: '1' }).trustProxy, 1);
});

test('a bad configuration names every bad setting, one line each', () => {
  assert.throws(
    () => loadConfig({ HTTP_PORT: 'eighty', TRUST_PROXY: 'true', MASTER_KEY: 'short', HOST_LABELS: 'api=mars' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.deepEqual(error.problems.map((p) => p.slice(0, p.indexOf(':'))).sort(), ['HOST_LABELS', 'HTTP_PORT', 'MASTER_KEY', 'TRUST_PROXY']);
      assert.equal(error.message.split('\n').length, 4);
      for (const line of error.message.split('\n')) assert.match(line, /^invalid configuration: [A-Z_]+: \S/);
      assert.doesNotMatch(error.message, /short/, 'a secret setting is not echoed');
      return true;
    },
  );
});
