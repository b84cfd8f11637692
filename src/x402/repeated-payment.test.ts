import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createX402SettlementRepository, type X402SettlementRepository } from '../store/x402-settlement-repository.ts';
import { createX402SettleAnswerRepository, type X402SettleAnswerRepository } from '../store/x402-settle-answer-repository.ts';
import { repeatedPaymentVerdict, settlementIdOf } from './repeated-payment.ts';

// A payment presented again to POST /x402/verify after its settle was answered pending (docs/x402.md):
// valid while its accepted settlement has not failed and no settle answered it settled, or under the
// same payment id; otherwise the ordinary verify decides. The real settlement and answer
// repositories on SQLite; the chains only tell their chain ids.

const factory = storeFactories.find((f) => f.name === 'sqlite')!;
let store: Store;
let dispose: () => Promise<void>;
let settlements: X402SettlementRepository;
let answers: X402SettleAnswerRepository;
before(async () => {
  ({ store, dispose } = await factory.open());
  settlements = createX402SettlementRepository(store.db);
  answers = createX402SettleAnswerRepository(store.db);
});
after(async () => { await dispose?.(); });

const chains = { ethereum: { chainId: 31337 }, optimism: { chainId: 10 }, bnb: { chainId: 56 }, opbnb: { chainId: 204 } } as never;
const deps = () => ({ chains, settlements, answers });

const payer = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
const asset = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const payTo = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
const signature = `0x${'11'.repeat(65)}`;
const requirements = { scheme: 'exact', network: 'eip155:31337', asset, amount: '1000', payTo, maxTimeoutSeconds: 60, extra: { name: 'VIXP', version: '1' } };
const nonceOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

function body(n: number, o: { requirements?: Record<string, unknown>; accepted?: Record<string, unknown>; signature?: string } = {}) {
  const authorization = { from: payer.toLowerCase(), to: payTo, value: '1000', validAfter: '0', validBefore: '1900000000', nonce: nonceOf(n).toUpperCase().replace('0X', '0x') };
  return {
    x402Version: 2,
    paymentPayload: { x402Version: 2, accepted: { ...requirements, ...o.accepted }, payload: { authorization, signature: o.signature ?? signature } },
    paymentRequirements: { ...requirements, ...o.requirements },
  };
}

const idOf = (n: number) => `ethereum:${asset.toLowerCase()}:${payer.toLowerCase()}:${nonceOf(n)}`;

/** The settlement of payment `n` as a settle accepted it. */
async function accepted(n: number): Promise<string> {
  const id = idOf(n);
  assert.equal(await settlements.accept({
    id, nonce: nonceOf(n), network: 'ethereum', payer, payTo, asset, amount: '1000', validBefore: '1900000000', validAfter: '0',
    signature, keyId: 'k', createdAt: 1, updatedAt: 1,
  }), true);
  return id;
}

test('settlementIdOf names the settlement of a request on one of our networks, nothing for another chain or a malformed body', () => {
  assert.equal(settlementIdOf({ chains }, body(1)), idOf(1));
  assert.equal(settlementIdOf({ chains }, body(1, { requirements: { network: 'eip155:10' } })), `optimism:${asset.toLowerCase()}:${payer.toLowerCase()}:${nonceOf(1)}`);
  assert.equal(settlementIdOf({ chains }, body(1, { requirements: { network: 'eip155:999' } })), undefined);
  assert.equal(settlementIdOf({ chains }, 'nonsense'), undefined);
});

test('a payment accepted and not answered settled is valid again, its payer named, by any request', async () => {
  await accepted(2);
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(2), false), { isValid: true, payer });
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(2), true), { isValid: true, payer });
});

test('once a settle answered it settled, it is valid again only as the same request (the same payment id)', async () => {
  const id = await accepted(3);
  await settlements.finish(id, { status: 'settled', txHash: `0x${'cd'.repeat(32)}` }, 2);
  await answers.markAnswered(id, 'k', 3);
  assert.equal(await repeatedPaymentVerdict(deps(), body(3), false), undefined);
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(3), true), { isValid: true, payer });
});

test('a settled settlement not answered settled yet (its answer was pending) is valid again', async () => {
  const id = await accepted(4);
  await settlements.finish(id, { status: 'settled', txHash: `0x${'cd'.repeat(32)}` }, 2);
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(4), false), { isValid: true, payer });
});

test('a failed settlement, one never accepted, or another authorization under its nonce is not a repeated payment', async () => {
  const failed = await accepted(5);
  await settlements.finish(failed, { status: 'failed', errorReason: 'unexpected_settle_error' }, 2);
  assert.equal(await repeatedPaymentVerdict(deps(), body(5), true), undefined);
  assert.equal(await repeatedPaymentVerdict(deps(), body(6), true), undefined, 'never accepted');
  await accepted(7);
  assert.equal(await repeatedPaymentVerdict(deps(), body(7, { signature: `0x${'22'.repeat(65)}` }), true), undefined, 'another signature');
  assert.equal(await repeatedPaymentVerdict(deps(), body(7, { requirements: { amount: '999' }, accepted: { amount: '999' } }), true), undefined, 'another amount');
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(7), true), { isValid: true, payer }, 'the payment itself still is');
});

test('another scheme, an accepted network other than the requirements\', a network not ours, a malformed body or no answer store: not a repeated payment', async () => {
  await accepted(8);
  assert.equal(await repeatedPaymentVerdict(deps(), body(8, { requirements: { scheme: 'upto' } }), true), undefined);
  assert.equal(await repeatedPaymentVerdict(deps(), body(8, { accepted: { scheme: 'upto' } }), true), undefined);
  assert.equal(await repeatedPaymentVerdict(deps(), body(8, { accepted: { network: 'eip155:10' } }), true), undefined);
  assert.equal(await repeatedPaymentVerdict(deps(), body(8, { requirements: { network: 'eip155:999' }, accepted: { network: 'eip155:999' } }), true), undefined);
  assert.equal(await repeatedPaymentVerdict(deps(), 'nonsense', true), undefined);
  assert.equal(await repeatedPaymentVerdict({ chains, settlements }, body(8), true), undefined);
  assert.deepEqual(await repeatedPaymentVerdict(deps(), body(8), true), { isValid: true, payer });
});
