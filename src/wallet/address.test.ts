import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DomainError } from '#shared/errors.ts';
import { parseAddress } from './address.ts';

// An account address from outside (a request's `address`, `to`, `from`): answered in its EIP-55
// checksummed form, or refused as request.invalid naming the field. EIP-55's own example address.
const checksummed = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed';

/** The refusal of `value` as the field `field`: request.invalid, the field named in message and details. */
function assertRefused(value: unknown, field: string, message: string): void {
  assert.throws(() => parseAddress(value as string, field), (error: unknown) => {
    assert.ok(error instanceof DomainError, String(error));
    assert.equal(error.code, 'request.invalid');
    assert.equal(error.message, message);
    assert.equal(error.details, field);
    return true;
  });
}

test('an address in lower case or in its checksummed form is answered checksummed', () => {
  assert.equal(parseAddress(checksummed.toLowerCase(), 'to'), checksummed);
  assert.equal(parseAddress(checksummed, 'to'), checksummed);
});

test('a mixed-case address whose checksum is wrong is refused, naming the field', () => {
  // One letter's case flipped (the last `d` made `D`): a typo the checksum exists to catch.
  assertRefused('0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAeD', 'to', 'to is not a valid address');
  // All upper case is mixed case to EIP-55 (the 0x and the digits), and is not this address's checksum.
  assertRefused(`0x${checksummed.slice(2).toUpperCase()}`, 'from', 'from is not a valid address');
});

test('what is not an address is refused, naming the field', () => {
  for (const value of ['', '0x', checksummed.slice(0, -1), `${checksummed}0`, checksummed.slice(2), `0x${'g'.repeat(40)}`, ` ${checksummed}`]) {
    assertRefused(value, 'address', 'address is not a valid address');
  }
  for (const value of [undefined, null, 42, [checksummed], { address: checksummed }]) {
    assertRefused(value, 'address', 'address is not a valid address');
  }
});

test('the zero address is refused, naming the field', () => {
  assertRefused('0x0000000000000000000000000000000000000000', 'to', 'to must not be the zero address');
  assertRefused('0x0000000000000000000000000000000000000000', 'address', 'address must not be the zero address');
});

test('an address one away from zero is an address', () => {
  assert.equal(parseAddress('0x0000000000000000000000000000000000000001', 'to'), '0x0000000000000000000000000000000000000001');
});
