import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseGwei } from 'viem';
import { replacementFees } from './replacement-fees.ts';

const gwei = (n: string) => parseGwei(n);
const ceiling = gwei('500');

test('a replacement bids twice today\'s estimate when fees rose', () => {
  const fees = replacementFees({ maxFeePerGas: gwei('10'), maxPriorityFeePerGas: gwei('1') }, { maxFeePerGas: gwei('40'), maxPriorityFeePerGas: gwei('2') }, ceiling);
  assert.deepEqual(fees, { maxFeePerGas: gwei('80'), maxPriorityFeePerGas: gwei('4'), capped: false });
});

test('a replacement bids at least 12.5% more than the old fees, each of them, when the estimate is lower', () => {
  const fees = replacementFees({ maxFeePerGas: gwei('100'), maxPriorityFeePerGas: gwei('8') }, { maxFeePerGas: gwei('20'), maxPriorityFeePerGas: gwei('1') }, ceiling);
  assert.deepEqual(fees, { maxFeePerGas: gwei('112.5'), maxPriorityFeePerGas: gwei('9'), capped: false });
  // Rounded up: never below the 10% geth and anvil ask for.
  const odd = replacementFees({ maxFeePerGas: 9n, maxPriorityFeePerGas: 1n }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 0n }, ceiling);
  assert.ok(odd && odd.maxFeePerGas * 10n >= 9n * 11n && odd.maxPriorityFeePerGas >= 2n, JSON.stringify(odd, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
});

test('the fee cap stops at the ceiling (capped), and no replacement is made when the ceiling leaves no 12.5% bump', () => {
  const capped = replacementFees({ maxFeePerGas: gwei('300'), maxPriorityFeePerGas: gwei('2') }, { maxFeePerGas: gwei('400'), maxPriorityFeePerGas: gwei('2') }, ceiling);
  assert.deepEqual(capped, { maxFeePerGas: ceiling, maxPriorityFeePerGas: gwei('4'), capped: true });
  assert.equal(replacementFees({ maxFeePerGas: gwei('480'), maxPriorityFeePerGas: gwei('2') }, { maxFeePerGas: gwei('400'), maxPriorityFeePerGas: gwei('2') }, ceiling), undefined);
  // The priority fee never exceeds the fee cap.
  const tip = replacementFees({ maxFeePerGas: gwei('300'), maxPriorityFeePerGas: gwei('280') }, { maxFeePerGas: gwei('100'), maxPriorityFeePerGas: gwei('300') }, ceiling);
  assert.deepEqual(tip, { maxFeePerGas: gwei('337.5'), maxPriorityFeePerGas: gwei('337.5'), capped: false });
});
