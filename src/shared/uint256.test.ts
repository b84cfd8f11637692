import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { clockSeconds, exactNumber, formatUint256, maxUint256, parseAddress, parseUint256 } from './uint256.ts';

const seed = 27;

test('every uint256 round-trips exactly through its canonical spelling, up to 2^256 − 1', () => {
  fc.assert(fc.property(fc.bigInt({ min: 0n, max: maxUint256 }), (value) => {
    const parsed = parseUint256(formatUint256(value));
    return parsed.ok && parsed.value === value;
  }), { seed, numRuns: 2000 });
  for (const value of [0n, 1n, 2n ** 53n + 1n, 99999999999999999999n, maxUint256]) assert.deepEqual(parseUint256(value.toString()), { ok: true, value });
});

test('any string either parses to its exact value (and is its canonical spelling) or is refused with a reason', () => {
  const strings = fc.oneof(
    fc.string({ maxLength: 90 }),
    fc.stringMatching(/^[-+ 0x.e\d\n\t]{0,90}$/),
    fc.bigInt({ min: 0n, max: maxUint256 * 4n }).map((v) => v.toString()),
  );
  fc.assert(fc.property(strings, (input) => {
    const parsed = parseUint256(input);
    if (parsed.ok) return parsed.value.toString() === input && parsed.value <= maxUint256;
    return typeof parsed.reason === 'string' && parsed.reason.length > 0;
  }), { seed, numRuns: 5000 });
});

test('other spellings of a number are refused, never read as a nearby value', () => {
  for (const spelling of ['01000', ' 1000', '1000 ', '0x3e8', '+1000', '\n1000', '1e3', '1000.0', '-1', '', '١٠٠٠', "' OR 1=1--", (maxUint256 + 1n).toString()]) {
    assert.equal(parseUint256(spelling).ok, false, JSON.stringify(spelling));
  }
  for (const notString of [1000, 1000n, null, undefined, {}, ['1000']]) assert.equal(parseUint256(notString).ok, false);
  assert.equal(parseUint256(`1${'0'.repeat(100_000)}`).ok, false);
});

test('addresses: lowercase or checksummed, answered checksummed; anything else refused', () => {
  assert.deepEqual(parseAddress('0x70997970c51812dc3a010c7d01b50e0d17dc79c8'), { ok: true, value: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8' });
  assert.equal(parseAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79C8').ok, true);
  for (const bad of ['not-an-address', '0x70997970c51812dc3A010C7d01b50e0d17dc79C8', '0x1234', '70997970c51812dc3a010c7d01b50e0d17dc79c8', 42, null]) {
    assert.equal(parseAddress(bad).ok, false, String(bad));
  }
});

test('a chain count converts to a number exactly or not at all', () => {
  assert.equal(exactNumber(2n ** 53n - 1n), Number.MAX_SAFE_INTEGER);
  assert.throws(() => exactNumber(2n ** 53n), RangeError);
  assert.equal(clockSeconds(2n ** 53n + 1n), Number.MAX_SAFE_INTEGER);
  assert.equal(clockSeconds(1_900_000_000n), 1_900_000_000);
});
