import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signatureHeaderValue, verifySignature } from './signature.ts';

const body = '{"id":"evt_1","type":"payment.approved","created":1763800000,"data":{"tid":"T-1001"}}';

test('the header is t=<unix seconds>,v1=<lowercase hex HMAC-SHA256(secret, "<t>.<raw body>")>', () => {
  const expected = createHmac('sha256', 'whsec_a').update(`1763800000.${body}`).digest('hex');
  assert.equal(signatureHeaderValue(['whsec_a'], 1763800000, body), `t=1763800000,v1=${expected}`);
});

test('a receiver accepts its own secret within 5 minutes, and nothing else', () => {
  const header = signatureHeaderValue(['whsec_a'], 1763800000, body);
  assert.equal(verifySignature('whsec_a', header, body, { now: 1763800000 + 299 }), true);
  assert.equal(verifySignature('whsec_a', header, body, { now: 1763800000 + 301 }), false, 'older than 5 minutes');
  assert.equal(verifySignature('whsec_b', header, body, { now: 1763800000 }), false, 'another secret');
  assert.equal(verifySignature('whsec_a', header, body.replace('T-1001', 'T-1002'), { now: 1763800000 }), false, 'another body');
  assert.equal(verifySignature('whsec_a', header.replace('t=1763800000', 't=1763800100'), body, { now: 1763800100 }), false, 'another timestamp');
  assert.equal(verifySignature('whsec_a', 'v1=00', body), false, 'no timestamp');
});

test('during a rotation both secrets sign: a receiver on either one accepts', () => {
  const header = signatureHeaderValue(['whsec_new', 'whsec_old'], 1763800000, body);
  assert.equal(header.split(',').filter((part) => part.startsWith('v1=')).length, 2);
  assert.equal(verifySignature('whsec_new', header, body, { now: 1763800000 }), true);
  assert.equal(verifySignature('whsec_old', header, body, { now: 1763800000 }), true);
});
