import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequest } from './parse-request.ts';

const requirements = {
  scheme: 'exact', network: 'eip155:31337', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3', amount: '1000',
  payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', maxTimeoutSeconds: 60, extra: { name: 'VIXP', version: '1' },
};
const authorization = {
  from: '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266', to: requirements.payTo, value: '1000', validAfter: '0', validBefore: '1900000000',
  nonce: `0x${'AB'.repeat(32)}`,
};
const body = (overrides: Record<string, unknown> = {}) => ({
  x402Version: 2,
  paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization, signature: `0x${'11'.repeat(65)}` } },
  paymentRequirements: requirements,
  ...overrides,
});

test('a v2 exact EVM request is parsed: addresses checksummed, amounts as bigints, the nonce lowercase', () => {
  const parsed = parseRequest(body());
  assert.ok(parsed.ok);
  assert.equal(parsed.authorization.from, '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266');
  assert.equal(parsed.authorization.value, 1000n);
  assert.equal(parsed.authorization.nonce, `0x${'ab'.repeat(32)}`);
});

test('each malformed part is refused with the specification\'s reason', () => {
  const reason = (b: unknown) => { const p = parseRequest(b); return p.ok ? 'ok' : p.reason; };
  assert.equal(reason('nonsense'), 'invalid_payload');
  assert.equal(reason(body({ x402Version: 1 })), 'invalid_x402_version');
  assert.equal(reason(body({ paymentRequirements: { ...requirements, payTo: undefined } })), 'invalid_payment_requirements');
  assert.equal(reason(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization: { ...authorization, value: '-1' }, signature: '0x11' } } })), 'invalid_payload');
  assert.equal(reason(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { permit2Authorization: {} } } })), 'invalid_payload');
});

test('numbers in another spelling and malformed addresses are refused with the reason; the requirements\' amount, payTo and asset are parsed', () => {
  const refusal = (b: unknown) => { const p = parseRequest(b); return p.ok ? 'ok' : `${p.reason}: ${p.message}`; };
  for (const amount of ['01000', ' 1000', '1e3', '0x3e8', '+1000', '1000.0', (2n ** 256n).toString()]) {
    assert.match(refusal(body({ paymentRequirements: { ...requirements, amount } })), /^invalid_payment_requirements: amount: /, amount);
  }
  assert.match(refusal(body({ paymentRequirements: { ...requirements, payTo: 'not-an-address' } })), /^invalid_payment_requirements: /);
  const spelled = { ...authorization, validBefore: '01900000000' };
  assert.match(refusal(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization: spelled, signature: '0x11' } } })),
    /^invalid_payload: payload: authorization.validBefore: not a canonical decimal/);
  const parsed = parseRequest(body({ paymentRequirements: { ...requirements, payTo: requirements.payTo.toLowerCase() } }));
  assert.ok(parsed.ok);
  assert.deepEqual(parsed.bound, { amount: 1000n, payTo: requirements.payTo, asset: requirements.asset });
  const huge = parseRequest(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization: { ...authorization, validBefore: '99999999999999999999' }, signature: '0x11' } } }));
  assert.ok(huge.ok);
  assert.equal(huge.authorization.validBefore, 99999999999999999999n);
});
