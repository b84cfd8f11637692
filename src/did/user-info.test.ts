import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDomainError } from '#shared/errors.ts';
import { validateUserInfo } from './user-info.ts';
import { addressOfDid, didForAddress, normalizeDid } from './did-identifiers.ts';

test('userInfo: a flat object of strings, numbers and booleans passes unchanged', () => {
  const info = { name: 'Alice Kim', 'e.mail': 'a@example.com', age: 30, member: false, tier_2: '' };
  assert.deepEqual(validateUserInfo(info), info);
});

test('userInfo: everything else is request.invalid', () => {
  const cases: unknown[] = [
    undefined, null, 'x', [1], {}, { nested: {} }, { list: [1] }, { n: null }, { big: Number.POSITIVE_INFINITY },
    { '@context': 'x' }, { _hidden: 1 }, { 'a b': 1 }, { ['k'.repeat(65)]: 1 }, { s: 'x'.repeat(1025) },
    Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, i])), JSON.parse('{"__proto__": {"polluted": true}}'),
  ];
  for (const value of cases) {
    assert.throws(() => validateUserInfo(value), (error) => isDomainError(error) && error.code === 'request.invalid', JSON.stringify(value)?.slice(0, 40));
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('did:ethr address DIDs have one spelling: the checksummed address', () => {
  const address = '0x4c3229092175dD1FA33Ba67f9a8C240211C3b8b4';
  assert.equal(didForAddress(address.toLowerCase()), `did:ethr:${address}`);
  assert.equal(normalizeDid(`did:ethr:${address.toLowerCase()}`), `did:ethr:${address}`);
  assert.equal(addressOfDid(`did:ethr:${address.toUpperCase().replace('0X', '0x')}`), address);
  assert.equal(addressOfDid('did:ethr:sepolia:0x4c3229092175dD1FA33Ba67f9a8C240211C3b8b4'), undefined);
  assert.equal(addressOfDid('did:web:example.com'), undefined);
  assert.equal(normalizeDid('did:web:example.com'), 'did:web:example.com');
});
