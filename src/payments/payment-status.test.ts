import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits } from 'viem';
import { paymentStatus } from './payment-status.ts';
import { runPayment } from './run-payment.ts';
import { cancelPayment } from './cancel-payment.ts';
import { paymentTransferReference } from './settle-stale-payment.ts';
import type { SessionEvent } from '../pairing/session-events.ts';
import { connectApp, openPaymentsParts, posSide, usdx, vixp, type PaymentsParts } from '../../test/support/payments-parts.ts';

// A store's payment status by tran_no, as its integrator reads it, on a real SQLite store and the
// real payment repository (stand-in chain of test/support/payments-parts.ts): pending, approved with
// its refunds, failed with its code; a stale pending one settled from the chain's answer first.

const VIXP = (n: string) => parseUnits(n, 18);

async function withParts(body: (parts: PaymentsParts) => Promise<void>) {
  const parts = await openPaymentsParts();
  try { await body(parts); } finally { await parts.dispose(); }
}

async function pay(parts: PaymentsParts, tranNo: string, options: { units?: bigint; expired?: boolean } = {}) {
  const user = parts.newUser(options.units ?? VIXP('10'));
  connectApp(parts, user);
  const pos = posSide();
  await runPayment(parts.deps, parts.shop, {
    tid: parts.shop.tid, tranNo, exchangeAmount: '10000', userUuid: user.userUuid, expirationTime: options.expired ? 1 : 0,
  }, pos);
  return { user, pos };
}

test('an approved payment: END_PAY\'s fields, its completed refunds and the refunded total in token units', () => withParts(async (parts) => {
  const { user, pos } = await pay(parts, 'S1');
  const approval = (pos.events.at(-1) as Extract<SessionEvent, { type: 'end_pay' }>).approval;
  const status = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S1');
  assert.deepEqual(status, { ...approval, tid: parts.shop.tid, status: 'approved', refundedAmount: '0', refunds: [] });
  const refund = await cancelPayment(parts.deps, parts.shop, { tid: parts.shop.tid, transferTransactionId: approval.transferTransactionId, tokenAmount: '2.5' });
  parts.chain.script.push({ kind: 'pending' });
  await assert.rejects(cancelPayment(parts.deps, parts.shop, { tid: parts.shop.tid, transferTransactionId: approval.transferTransactionId, tokenAmount: '1' }));
  const after = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S1');
  assert.equal(after.refundedAmount, '3.5', 'the reserved pending refund counts');
  assert.deepEqual(after.refunds, [{ tokenAmount: '2.5', transferTransactionId: refund.transferTransactionId, approvalNo: refund.approvalNo, approvalDate: refund.approvalDate }]);
  assert.equal(after.userAddress, user.address);
}));

test('a failed payment: its code, and no quote fields when it failed before the quote; an unknown stored code is internal', () => withParts(async (parts) => {
  await pay(parts, 'S2', { expired: true });
  const status = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S2');
  assert.deepEqual([status.status, status.failureCode, status.tokenAmount, status.userAddress, status.refunds, status.refundedAmount], ['failed', 'payment.expired', '', '', [], '0']);
  assert.equal(status.contractAddress, vixp.contractAddress);
  assert.deepEqual([status.transferTransactionId, status.approvalNo, status.approvalDate, status.exchangeDateIndex, status.exchangeRate], ['', '', '', '', '']);
  await pay(parts, 'S3', { units: VIXP('1') });
  const poor = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S3');
  assert.deepEqual([poor.failureCode, poor.tokenAmount], ['wallet.insufficient_balance', '10'], 'quoted, then failed');
  await parts.store.db.updateTable('payments').set({ failure_code: 'no.such_code' }).where('tran_no', '=', 'S3').execute();
  assert.equal((await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S3')).failureCode, 'internal');
  await assert.rejects(paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'nope'), { code: 'payment.not_found' });
  await assert.rejects(paymentStatus(parts.deps, parts.shop, 'T9999', 'S2'), { code: 'request.unauthorized', details: 'tid' });
}));

test('a pending payment: pending within the stale window; after it, settled from its transfer on chain first', () => withParts(async (parts) => {
  parts.chain.script.push({ kind: 'pending' }, { kind: 'pending' });
  await pay(parts, 'S4');
  await pay(parts, 'S5');
  const pending = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S4');
  assert.deepEqual([pending.status, pending.failureCode, pending.transferTransactionId, pending.approvalNo], ['pending', undefined, '', '']);
  assert.ok(!('failureCode' in pending));
  const s4 = (await parts.deps.payments.findByTranNo(parts.shop.tid, 'S4'))!;
  const s5 = (await parts.deps.payments.findByTranNo(parts.shop.tid, 'S5'))!;
  await parts.chain.settle(paymentTransferReference(s4.id), 'used');
  await parts.chain.settle(paymentTransferReference(s5.id), 'expired');
  parts.now = s4.updatedAt + 2000 + 2000 + 5 * 60_000;
  assert.equal((await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S4')).status, 'pending', 'not stale at the window\'s last millisecond');
  parts.now += 1;
  const approved = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S4');
  assert.deepEqual([approved.status, approved.transferTransactionId, approved.tokenAmount], ['approved', await parts.chain.txHashOf(paymentTransferReference(s4.id)), '10']);
  assert.match(approved.approvalNo, /^20261128\d{8}$/);
  const failed = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S5');
  assert.deepEqual([failed.status, failed.failureCode], ['failed', 'internal']);
  assert.equal((await parts.deps.payments.findByTranNo(parts.shop.tid, 'S5'))?.failureCode, 'internal', 'recorded as internal');
}));

test('what the operator reads: refusals\' messages; a long tran_no is cut to 128 characters in the message', () => withParts(async (parts) => {
  await assert.rejects(paymentStatus(parts.deps, parts.shop, 'T9999', 'S1'), { message: 'tid is not the store of this API key' });
  const long = 'x'.repeat(300);
  await assert.rejects(paymentStatus(parts.deps, parts.shop, parts.shop.tid, long), { message: `no payment of this store with tran_no ${'x'.repeat(128)}` });
}));

test('an approved or failed payment long after: answered as recorded, nothing settled again', () => withParts(async (parts) => {
  const { pos } = await pay(parts, 'S6');
  await pay(parts, 'S7', { expired: true });
  parts.now += 3_600_000;
  const approved = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S6');
  assert.equal(approved.approvalNo, (pos.events.at(-1) as Extract<SessionEvent, { type: 'end_pay' }>).approval.approvalNo);
  assert.equal((await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'S7')).failureCode, 'payment.expired');
  assert.deepEqual(parts.logs, []);
  const next = await pay(parts, 'S8');
  assert.equal((next.pos.events.at(-1) as Extract<SessionEvent, { type: 'end_pay' }>).approval.approvalNo, '2026112800000002', 'no number spent');
}));

test('a payment in an allowed token: its refunded total in that token\'s units', () => withParts(async (parts) => {
  const user = parts.newUser();
  parts.chain.mint(user.address, 5_000_000n, usdx.contractAddress);
  connectApp(parts, user);
  const pos = posSide();
  await runPayment(parts.deps, parts.shop, { tid: parts.shop.tid, tranNo: 'U1', exchangeAmount: '2500', tokenSymbol: 'USDX', userUuid: user.userUuid, expirationTime: 0 }, pos);
  const approval = (pos.events.at(-1) as Extract<SessionEvent, { type: 'end_pay' }>).approval;
  await cancelPayment(parts.deps, parts.shop, { tid: parts.shop.tid, transferTransactionId: approval.transferTransactionId, tokenAmount: '1' });
  const status = await paymentStatus(parts.deps, parts.shop, parts.shop.tid, 'U1');
  assert.deepEqual([status.tokenSymbol, status.tokenAmount, status.refundedAmount, status.refunds.map((r) => r.tokenAmount)], ['USDX', '2.5', '1', ['1']]);
}));
