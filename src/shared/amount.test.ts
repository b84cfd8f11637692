import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatTokenAmount, parseTokenAmount } from './amount.ts';
import { DomainError } from './errors.ts';
import { maxUint256 } from './uint256.ts';

// Token amounts from outside (JSON-RPC transfer/createToken/mint amounts, gRPC token_amount, the CLI's
// amounts): a decimal string of tokens, parsed once, exactly, into base units.
const seed = 29;
const decimals = fc.integer({ min: 0, max: 36 });

/** Parsed to base units in 1..2^256 − 1, or refused with request.invalid; nothing else. */
function outcome(input: unknown, d: number): bigint | 'refused' {
  try {
    const units = parseTokenAmount(input as string, d);
    assert.equal(typeof units, 'bigint');
    return units;
  } catch (error) {
    assert.ok(error instanceof DomainError, `${JSON.stringify(input)}: ${String(error)}`);
    assert.equal(error.code, 'request.invalid');
    return 'refused';
  }
}

test('every amount of 1 to 2^256 − 1 base units round-trips exactly through its decimal string, whatever the decimals', () => {
  fc.assert(fc.property(fc.bigInt({ min: 1n, max: maxUint256 }), decimals, (units, d) => parseTokenAmount(formatTokenAmount(units, d), d) === units), { seed, numRuns: 3000 });
  for (const d of [0, 6, 18]) assert.equal(parseTokenAmount(formatTokenAmount(maxUint256, d), d), maxUint256);
});

test('an amount above 2^256 − 1 base units is refused, not parsed into a number no chain can carry', () => {
  fc.assert(fc.property(fc.bigInt({ min: maxUint256 + 1n, max: maxUint256 * 10n ** 20n }), decimals, (units, d) => outcome(formatTokenAmount(units, d), d) === 'refused'), { seed, numRuns: 500 });
});

test('any input is parsed to its exact value or refused with request.invalid, never a TypeError', () => {
  const inputs = fc.oneof(
    fc.string({ maxLength: 100 }),
    fc.stringMatching(/^[-+ 0x.e\d\n\t,_]{0,100}$/),
    fc.tuple(fc.bigInt({ min: 0n, max: maxUint256 }), fc.bigInt({ min: 0n, max: 10n ** 40n })).map(([w, f]) => `${w}.${f}`),
    fc.anything(),
  );
  fc.assert(fc.property(inputs, decimals, (input, d) => {
    const result = outcome(input, d);
    if (result === 'refused') return true;
    // Parsed: the same number as written (trailing zeros of the fraction aside), within uint256.
    return result >= 1n && result <= maxUint256 && formatTokenAmount(result, d) === canonical(input as string);
  }), { seed, numRuns: 5000 });
});

function canonical(decimal: string): string {
  const [whole, fraction = ''] = decimal.split('.');
  const trimmed = fraction.replace(/0+$/, '');
  return trimmed ? `${whole}.${trimmed}` : whole!;
}

test('a refused amount names its field (`amount` unless told) and says why, as the answer\'s message and details', () => {
  const refusal = (input: unknown, d: number, field?: string) => {
    try {
      parseTokenAmount(input as string, d, field);
    } catch (error) {
      assert.ok(error instanceof DomainError);
      return { code: error.code, message: error.message, details: error.details };
    }
    return assert.fail(`${String(input)} was not refused`);
  };
  assert.deepEqual(refusal('1e3', 18), { code: 'request.invalid', details: 'amount', message: 'amount must be a decimal string such as "12.5"' });
  assert.deepEqual(refusal(5, 18, 'tokenAmount'), { code: 'request.invalid', details: 'tokenAmount', message: 'tokenAmount must be a decimal string such as "12.5"' });
  assert.deepEqual(refusal('1.001', 2, 'initialSupply'), { code: 'request.invalid', details: 'initialSupply', message: 'initialSupply has more than 2 decimal places' });
  assert.deepEqual(refusal('0.00', 2), { code: 'request.invalid', details: 'amount', message: 'amount must be greater than zero' });
  assert.deepEqual(refusal(maxUint256.toString(), 1), { code: 'request.invalid', details: 'amount', message: 'amount is more than 2^256 − 1 base units' });
});
