import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress, type Address, type Hex } from 'viem';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { BoundRequirements, ExactAuthorization } from './parse-request.ts';
import { bindingRefusal } from './settle-payment.ts';

// What a settle request must be to be answered an accepted settlement's outcome (docs/x402.md,
// "the same authorization presented with…"): the settled network, payer and signature, the signed
// authorization itself, then the requirements' payTo, amount and asset. A pure check of the request
// against the stored record (settlePayment runs it on every answer: the platform and hostile suites
// carry it through a server, test/x402.test.ts and test/x402-hostile.test.ts).

const payer = getAddress('0x70997970C51812dc3A010C7d01b50e0d17dc79C8');
const payTo = getAddress('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC');
const asset = getAddress('0x5FbDB2315678afecb367f032d93F642f64180aa3');
const elsewhere = getAddress('0x90F79bf6EB2c4f870365E785982E1f101E93b906');
const nonce: Hex = `0x${'ab'.repeat(32)}`;
const signature: Hex = `0x${'1f'.repeat(65)}`;

/** The settlement as accepted (stored addresses lower case, as a hand-written row may have them; signature upper case). */
const record: X402SettlementRecord = {
  id: `ethereum:${asset.toLowerCase()}:${payer.toLowerCase()}:${nonce}`, nonce, network: 'ethereum', payer, payTo: payTo.toLowerCase(), asset: asset.toLowerCase(),
  amount: '1000', validBefore: '1900000000', validAfter: '5', signature: signature.toUpperCase().replace('0X', '0x'), keyId: 'k', status: 'accepted',
  createdAt: 1, updatedAt: 1,
} as X402SettlementRecord;
const authorization: ExactAuthorization = { from: payer, to: payTo, value: 1000n, validAfter: 5n, validBefore: 1_900_000_000n, nonce };
const bound: BoundRequirements = { amount: 1000n, payTo, asset };

const reasonOf = (o: { record?: Partial<X402SettlementRecord>; network?: 'ethereum' | 'polygon'; bound?: Partial<BoundRequirements>; authorization?: Partial<ExactAuthorization>; signature?: string } = {}) =>
  bindingRefusal({ ...record, ...o.record } as X402SettlementRecord, (o.network ?? 'ethereum') as never, { ...bound, ...o.bound }, { ...authorization, ...o.authorization }, o.signature ?? signature)?.reason ?? 'bound';

describe('bindingRefusal', () => {
  test('the request that was accepted is bound, whatever the case of the stored addresses and signature', () => {
    assert.equal(bindingRefusal(record, 'ethereum', bound, authorization, signature), undefined);
  });

  test('another network is refused invalid_network', () => {
    assert.deepEqual(bindingRefusal({ ...record, network: 'polygon' }, 'ethereum', bound, authorization, signature), { reason: 'invalid_network', message: 'this authorization was settled on another network' });
  });

  test('another payer or another signature under the nonce is refused nonce_already_used', () => {
    assert.deepEqual(bindingRefusal(record, 'ethereum', bound, { ...authorization, from: elsewhere }, signature), { reason: 'invalid_exact_evm_nonce_already_used', message: 'another authorization with this nonce was settled' });
    assert.equal(reasonOf({ signature: `0x${'2f'.repeat(65)}` }), 'invalid_exact_evm_nonce_already_used');
  });

  test('the same signature over other fields (to, value, validBefore, validAfter) is refused invalid_exact_evm_signature', () => {
    const refusal = { reason: 'invalid_exact_evm_signature', message: 'the signature is not of this authorization' };
    assert.deepEqual(bindingRefusal(record, 'ethereum', bound, { ...authorization, to: elsewhere }, signature), refusal);
    assert.equal(reasonOf({ authorization: { value: 1001n } }), 'invalid_exact_evm_signature');
    assert.equal(reasonOf({ authorization: { validBefore: 1_900_000_001n } }), 'invalid_exact_evm_signature');
    assert.equal(reasonOf({ authorization: { validAfter: 6n } }), 'invalid_exact_evm_signature');
  });

  test('a stored number that does not parse binds nothing: invalid_exact_evm_signature', () => {
    assert.equal(reasonOf({ record: { amount: 'x' } }), 'invalid_exact_evm_signature');
    assert.equal(reasonOf({ record: { validBefore: '-1' } }), 'invalid_exact_evm_signature');
    assert.equal(reasonOf({ record: { validAfter: '' } }), 'invalid_exact_evm_signature');
  });

  test('requirements naming another payTo are refused recipient_mismatch; another amount or asset value_mismatch', () => {
    assert.deepEqual(bindingRefusal(record, 'ethereum', { ...bound, payTo: elsewhere as Address }, authorization, signature), { reason: 'invalid_exact_evm_recipient_mismatch', message: 'this authorization pays another payTo' });
    assert.deepEqual(bindingRefusal(record, 'ethereum', { ...bound, amount: 999n }, authorization, signature), { reason: 'invalid_exact_evm_payload_authorization_value_mismatch', message: 'this authorization pays another amount or asset' });
    assert.equal(reasonOf({ bound: { asset: elsewhere } }), 'invalid_exact_evm_payload_authorization_value_mismatch');
  });
});
