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
  assert.equal(reason(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { permit2Authorization: {} } } })), 'unsupported_payload_type');
});

test('the Permit2 form is refused unsupported_payload_type, naming its payer when it names one by address', () => {
  const permit2 = (from: unknown) => parseRequest(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { signature: '0x11', permit2Authorization: { from } } } }));
  const named = permit2(authorization.from);
  assert.ok(!named.ok);
  assert.deepEqual([named.reason, named.payer], ['unsupported_payload_type', '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266']);
  assert.match(named.message, /Permit2 form .* not settled by this facilitator/);
  for (const from of ['not-an-address', 7, undefined]) {
    const unnamed = permit2(from);
    assert.ok(!unnamed.ok);
    assert.deepEqual([unnamed.reason, unnamed.payer], ['unsupported_payload_type', undefined]);
  }
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

test('the nonce is exactly 32 bytes of hex and the signature whole bytes of hex, nothing before or after', () => {
  const reason = (a: Record<string, unknown>, signature: string) => {
    const p = parseRequest(body({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization: { ...authorization, ...a }, signature } } }));
    return p.ok ? 'ok' : p.message;
  };
  const hex64 = 'ab'.repeat(32);
  assert.equal(reason({ nonce: `0x${hex64}` }, '0x1122'), 'ok');
  for (const nonce of [`x0x${hex64}`, `0x${hex64}0`, `0x${hex64.slice(1)}`, ` 0x${hex64}`, `0x${hex64}\n`]) {
    assert.match(reason({ nonce }, '0x11'), /^payload: authorization\.nonce: /, JSON.stringify(nonce));
  }
  for (const signature of ['0x', '0x1', '0x112', 'x0x11', '0x11 ', ' 0x11', '0x11zz', `0x${'11'.repeat(10_000)}`]) {
    assert.match(reason({}, signature), /^payload: signature: /, signature.slice(0, 12));
  }
});

test('a refusal names what is wrong: the envelope, the version, the payload, at most three issues with their paths', () => {
  const refusal = (b: unknown) => { const p = parseRequest(b); return p.ok ? 'ok' : `${p.reason}: ${p.message}`; };
  assert.equal(refusal(null), 'invalid_payload: the body is { x402Version, paymentPayload, paymentRequirements }');
  assert.equal(refusal(body({ x402Version: 1 })), 'invalid_x402_version: this facilitator speaks x402 version 2');
  assert.equal(refusal({ paymentPayload: { x402Version: 3 }, paymentRequirements: requirements }), 'invalid_x402_version: this facilitator speaks x402 version 2');
  assert.equal(refusal({ paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization, signature: '0x11' } }, paymentRequirements: requirements }), 'ok', 'the version may be the payload\'s');
  assert.match(refusal(body({ paymentPayload: { x402Version: 2, payload: {} } })), /^invalid_payload: accepted: /);
  const many = refusal(body({ paymentRequirements: {} }));
  assert.match(many, /^invalid_payment_requirements: \w+: [^;]+; \w+: [^;]+; \w+: [^;]+$/, 'three issues, each with its field');
  assert.match(refusal(body({ paymentRequirements: 'text' })), /^invalid_payment_requirements: value: /, 'an issue of the whole value is named "value"');
});
