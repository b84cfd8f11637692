import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PAYMENT_IDENTIFIER, appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { openStore, type Store } from '../store/db.ts';
import { createIdempotencyRepository, type IdempotencyRepository } from '../store/idempotency-repository.ts';
import { claimPaymentId, lookUpPaymentId, paymentIdTtlMs, paymentIdentifierOf, type PaymentIdentifierOf } from './payment-identifier.ts';

// The payment-identifier extension as a buyer built with @x402/extensions sends it (docs/x402.md):
// the same id with the same request answers the stored result; another request under it is a conflict.

const requirements = { scheme: 'exact', network: 'eip155:31337', amount: '1000', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3', payTo: '0x70997970C51812dc3A010C7d01b50e0d17dc79C8', maxTimeoutSeconds: 60 };
/** A settle body whose payload carries `id` the way the published client appends it. */
const bodyWith = (id: string | undefined, nonce = '0x01') => {
  const extensions: Record<string, unknown> = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() };
  // The published client refuses to append an invalid id: a hand-made client's is set as it would send it.
  if (id !== undefined && id.length >= 16) appendPaymentIdentifierToExtensions(extensions, id);
  else if (id !== undefined) (extensions[PAYMENT_IDENTIFIER] as { info: Record<string, unknown> }).info.id = id;
  return { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { nonce }, extensions }, paymentRequirements: requirements };
};
const idOf = (of: PaymentIdentifierOf) => { assert.equal(of.kind, 'id'); return of as Extract<PaymentIdentifierOf, { kind: 'id' }>; };

test('what a body says of the extension: nothing, an invalid id with the reason, or an id scoped to the asking key\'s store', () => {
  const scope = { keyId: 'k1', tid: 'T1' };
  for (const body of [undefined, null, 'text', 5, {}, { paymentPayload: null }, { paymentPayload: 'x' }, { paymentPayload: { payload: {} } },
    { paymentPayload: { extensions: null } }, { paymentPayload: { extensions: 'x' } }, { paymentPayload: { extensions: {} } }, { paymentPayload: { extensions: { other: {} } } }]) {
    assert.deepEqual(paymentIdentifierOf(body, scope), { kind: 'none' }, JSON.stringify(body));
  }
  assert.deepEqual(paymentIdentifierOf(bodyWith(undefined), scope), { kind: 'none' }, 'declared, no id appended');
  const invalid = paymentIdentifierOf(bodyWith('short'), scope);
  assert.equal(invalid.kind, 'invalid');
  assert.match((invalid as { message: string }).message, /^payment-identifier: /);
  const id = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000001'), scope));
  assert.equal(id.id, 'pay_order_0000000001');
  assert.equal(id.scope, 'x402:tid:T1');
  assert.equal(idOf(paymentIdentifierOf(bodyWith('pay_order_0000000001'), { keyId: 'k1', tid: null })).scope, 'x402:key:k1');
  assert.equal(idOf(paymentIdentifierOf(bodyWith('pay_order_0000000001'), { keyId: 'k1' })).scope, 'x402:key:k1');
  assert.match(id.fingerprint, /^[0-9a-f]{64}$/);
});

/** `value` with every object's keys in reverse order, as another client may serialise it. */
const reversed = (value: unknown): unknown => Array.isArray(value) ? value.map(reversed)
  : value && typeof value === 'object' ? Object.fromEntries(Object.entries(value).reverse().map(([k, v]) => [k, reversed(v)])) : value;

test('the fingerprint is the whole request\'s: key order does not change it; any other payload or requirements do', () => {
  const scope = { keyId: 'k1' };
  const fingerprint = (body: unknown) => idOf(paymentIdentifierOf(body, scope)).fingerprint;
  const body = bodyWith('pay_order_0000000001');
  assert.notDeepEqual(Object.keys(reversed(body.paymentRequirements) as object), Object.keys(body.paymentRequirements));
  assert.equal(fingerprint(reversed(body)), fingerprint(body));
  assert.equal(fingerprint({ ...body, paymentPayload: { ...body.paymentPayload, unknown: undefined } }), fingerprint(body), 'an absent field is no field');
  assert.notEqual(fingerprint(bodyWith('pay_order_0000000001', '0x02')), fingerprint(body));
  assert.notEqual(fingerprint({ ...body, paymentRequirements: { ...requirements, amount: '1001' } }), fingerprint(body));
  assert.notEqual(fingerprint({ ...body, paymentRequirements: { ...requirements, maxTimeoutSeconds: 61 } }), fingerprint(body), 'numbers count');
  assert.notEqual(fingerprint({ ...body, paymentRequirements: { ...requirements, maxTimeoutSeconds: true } }), fingerprint({ ...body, paymentRequirements: { ...requirements, maxTimeoutSeconds: false } }));
  assert.notEqual(fingerprint({ ...body, paymentRequirements: [requirements] }), fingerprint(body), 'an array is not the object it holds');
  assert.notEqual(fingerprint({ ...body, paymentRequirements: [1, 2] }), fingerprint({ ...body, paymentRequirements: [12] }));
  assert.notEqual(fingerprint({ ...body, paymentRequirements: [1] }), fingerprint({ ...body, paymentRequirements: [2] }));
  assert.notEqual(fingerprint({ ...body, paymentRequirements: ['a'] }), fingerprint({ ...body, paymentRequirements: 'a' }));
  assert.notEqual(fingerprint({ paymentPayload: body.paymentPayload }), fingerprint({ paymentPayload: body.paymentPayload, paymentRequirements: {} }));
});

test('an invalid extension is refused with every reason @x402/extensions gives', () => {
  const body = bodyWith('pay_order_0000000001');
  const extension = body.paymentPayload.extensions[PAYMENT_IDENTIFIER] as { info: Record<string, unknown>; schema: unknown };
  // The schema the client echoes is checked too (all its errors): two missing properties, two reasons.
  extension.schema = { type: 'object', required: ['a', 'b'] };
  assert.deepEqual(paymentIdentifierOf(body, { keyId: 'k1' }), {
    kind: 'invalid', message: 'payment-identifier: (root): must have required property \'a\'; (root): must have required property \'b\'',
  });
  extension.schema = undefined;
  extension.info = { required: 'yes' };
  assert.deepEqual(paymentIdentifierOf(body, { keyId: 'k1' }), { kind: 'invalid', message: 'payment-identifier: Extension info must have a \'required\' boolean property' });
});

describe('an id\'s state in the store (SQLite)', () => {
  let store: Store;
  let dataDir: string;
  let keys: IdempotencyRepository;
  before(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-payment-id-'));
    store = await openStore({ dataDir });
    keys = createIdempotencyRepository(store.db);
  });
  after(async () => { await store.close(); rmSync(dataDir, { recursive: true, force: true }); });

  test('free, claimed once, then the same request (with its final answer once recorded), another request a conflict; free again after 24 hours', async () => {
    const now = 1_800_000_000_000;
    const id = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000042'), { keyId: 'k1', tid: 'T1' }));
    const other = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000042', '0x02'), { keyId: 'k1', tid: 'T1' }));
    assert.deepEqual(await lookUpPaymentId(keys, id, now), { kind: 'free' });
    assert.deepEqual(await lookUpPaymentId(keys, id, now), { kind: 'free' }, 'a lookup binds nothing');
    assert.deepEqual(await claimPaymentId(keys, id, now), { kind: 'free', claimed: true });
    assert.deepEqual(await claimPaymentId(keys, id, now + 1), { kind: 'same' });
    assert.deepEqual(await lookUpPaymentId(keys, id, now + 1), { kind: 'same' });
    assert.deepEqual(await claimPaymentId(keys, other, now + 1), { kind: 'conflict' });
    assert.deepEqual(await lookUpPaymentId(keys, other, now + 1), { kind: 'conflict' });
    const answer = { success: true, transaction: '0xabc', network: 'eip155:31337', payer: '0x1' };
    await keys.record(id.scope, id.id, 'done', JSON.stringify(answer), now + 2);
    assert.deepEqual(await claimPaymentId(keys, id, now + 3), { kind: 'same', answer });
    const pending = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000043'), { keyId: 'k1', tid: 'T1' }));
    await claimPaymentId(keys, pending, now);
    await keys.record(pending.scope, pending.id, 'pending', JSON.stringify({ success: false }), now + 1);
    assert.deepEqual(await claimPaymentId(keys, pending, now + 2), { kind: 'same' }, 'an answer not final is never served as the stored result');
    assert.deepEqual(await lookUpPaymentId(keys, pending, now + 2), { kind: 'same' });
    assert.deepEqual(await lookUpPaymentId(keys, id, now + 3), { kind: 'same', answer });
    assert.deepEqual(await lookUpPaymentId(keys, other, now + paymentIdTtlMs - 1), { kind: 'conflict' });
    assert.deepEqual(await lookUpPaymentId(keys, other, now + paymentIdTtlMs), { kind: 'free' }, 'an id names one request for 24 hours');
    assert.deepEqual(await claimPaymentId(keys, other, now + paymentIdTtlMs), { kind: 'free', claimed: true });
  });

  test('ids are per store: another store\'s same id is free', async () => {
    const now = 1_800_000_000_000;
    const mine = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000077'), { keyId: 'k1', tid: 'T1' }));
    const theirs = idOf(paymentIdentifierOf(bodyWith('pay_order_0000000077', '0x09'), { keyId: 'k2', tid: 'T2' }));
    assert.deepEqual(await claimPaymentId(keys, mine, now), { kind: 'free', claimed: true });
    assert.deepEqual(await claimPaymentId(keys, theirs, now), { kind: 'free', claimed: true });
  });
});
