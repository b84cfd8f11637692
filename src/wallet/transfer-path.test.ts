import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDomainError } from '#shared/errors.ts';
import { custodialTransferPath } from './transfer-path.ts';

const on = { ethereum: true, optimism: true, bnb: true, opbnb: true } as const;
const bnbOff = { ...on, bnb: false } as const;
const vixp = { symbol: 'VIXP', eip3009: true };
const usdt = { symbol: 'USDT', eip3009: false };

test('a network with EIP-7702: every token on the account path, those with EIP-3009 too', () => {
  assert.equal(custodialTransferPath('bnb', vixp, on), 'account');
  assert.equal(custodialTransferPath('bnb', usdt, on), 'account');
  assert.equal(custodialTransferPath('ethereum', vixp, bnbOff), 'account', 'only the network set off is');
});

test('a network without it: EIP-3009 for a token that has it; one without is refused before anything is reserved', () => {
  assert.equal(custodialTransferPath('bnb', vixp, bnbOff), 'eip3009');
  assert.throws(() => custodialTransferPath('bnb', usdt, bnbOff), (error: unknown) => isDomainError(error) && error.code === 'token.needs_eip7702'
    && error.message === 'USDT has no EIP-3009 and EIP7702_BNB is off: the platform cannot move it from custodial accounts');
});
