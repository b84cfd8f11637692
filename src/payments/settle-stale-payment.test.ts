import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits } from 'viem';
import { runPayment } from './run-payment.ts';
import { paymentTransferReference, settleStalePayments } from './settle-stale-payment.ts';
import type { SessionEvent } from '../pairing/session-events.ts';
import { connectApp, openPaymentsParts, posSide, webhooksOf } from '../../test/support/payments-parts.ts';

// The stale settlement of a pending payment (settle-stale-payment.ts) when another instance settles
// the same payment first, on a real SQLite store and payment repository with the stand-in chain of
// test/support/payments-parts.ts. Kept apart from run-payment.test.ts so that the payments mutation
// area's increments rerun only the mutants this reaches.

const approvalIn = (events: SessionEvent[]) => {
  const last = events.at(-1);
  assert.equal(last?.type, 'end_pay', `END_PAY, not ${JSON.stringify(last)}`);
  return (last as Extract<SessionEvent, { type: 'end_pay' }>).approval;
};

test('a stale settlement another instance approved first: the retry answers that approval, and this instance logs no approval of its own', async () => {
  const parts = await openPaymentsParts();
  try {
    const user = parts.newUser(parseUnits('30', 18));
    parts.chain.script.push({ kind: 'pending' });
    connectApp(parts, user);
    const req = { tid: parts.shop.tid, tranNo: 'TRN-STALE-1', exchangeAmount: '10000', userUuid: user.userUuid, expirationTime: 0 };
    await runPayment(parts.deps, parts.shop, req, posSide());
    const pending = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
    assert.equal(pending.status, 'pending');
    await parts.chain.settle(paymentTransferReference(pending.id), 'used');

    // Another instance's retry settles it from the chain first, with its own approval number.
    const real = parts.deps.payments;
    const markApproved = real.markApproved.bind(real);
    const theirs = '2026112899000001';
    real.markApproved = async (...args: Parameters<typeof real.markApproved>) => {
      await markApproved(args[0], { ...args[1], approvalNo: theirs }, args[2]);
      return markApproved(...args);
    };
    const logged = parts.logs.length;
    const retry = posSide();
    await runPayment(parts.deps, parts.shop, req, retry);
    real.markApproved = markApproved;

    const approval = approvalIn(retry.events);
    assert.equal(approval.approvalNo, theirs);
    assert.equal(approval.transferTransactionId, await parts.chain.txHashOf(paymentTransferReference(pending.id)));
    assert.equal((await real.findByTranNo(parts.shop.tid, req.tranNo))?.approvalNo, theirs);
    // The approval is the other instance's to log: this one adds no line ("stale payment approved …" would name a second approval).
    assert.deepEqual(parts.logs.slice(logged), []);
    assert.equal(parts.chain.transfers.length, 1, 'paid once');
  } finally {
    await parts.dispose();
  }
});

test('the sweep settles payments left pending past their stale window though nobody retries or asks: mined approved (its webhook owed), never made failed, open left pending, a recent one untouched', async () => {
  const parts = await openPaymentsParts();
  try {
    const pendingPayment = async (tranNo: string) => {
      const user = parts.newUser(parseUnits('30', 18));
      parts.chain.script.push({ kind: 'pending' });
      connectApp(parts, user);
      await runPayment(parts.deps, parts.shop, { tid: parts.shop.tid, tranNo, exchangeAmount: '10000', userUuid: user.userUuid, expirationTime: 0 }, posSide());
      const payment = (await parts.deps.payments.findByTranNo(parts.shop.tid, tranNo))!;
      assert.equal(payment.status, 'pending', tranNo);
      return payment;
    };
    const [mined, dropped, open] = [await pendingPayment('TRN-SWEEP-MINED'), await pendingPayment('TRN-SWEEP-DROPPED'), await pendingPayment('TRN-SWEEP-OPEN')];
    await parts.chain.settle(paymentTransferReference(mined.id), 'used');
    await parts.chain.settle(paymentTransferReference(dropped.id), 'expired');
    const statusOf = async (tranNo: string) => (await parts.deps.payments.findByTranNo(parts.shop.tid, tranNo))?.status;

    // The stale window is pairing (2 s) + idle (2 s) + 5 minutes after the last update: not a millisecond sooner.
    parts.now = Math.max(mined.updatedAt, dropped.updatedAt, open.updatedAt) + 2000 + 2000 + 5 * 60_000;
    assert.equal(await settleStalePayments(parts.deps), 0, 'nothing is stale at its window\'s last millisecond');
    const recent = await pendingPayment('TRN-SWEEP-RECENT');
    await parts.chain.settle(paymentTransferReference(recent.id), 'used');
    parts.now += 1;
    const transfers = parts.chain.transfers.length;
    assert.equal(await settleStalePayments(parts.deps), 2, 'the mined and the dropped one ended');
    assert.deepEqual([await statusOf('TRN-SWEEP-MINED'), await statusOf('TRN-SWEEP-DROPPED'), await statusOf('TRN-SWEEP-OPEN'), await statusOf('TRN-SWEEP-RECENT')],
      ['approved', 'failed', 'pending', 'pending']);
    const approved = (await parts.deps.payments.findByTranNo(parts.shop.tid, 'TRN-SWEEP-MINED'))!;
    assert.equal(approved.transferTransactionId, await parts.chain.txHashOf(paymentTransferReference(mined.id)), 'approved with the transaction that carried it');
    const events = await webhooksOf(parts);
    assert.deepEqual(events.filter((e) => e.data.tran_no === 'TRN-SWEEP-MINED').map((e) => e.type), ['payment.approved']);
    assert.deepEqual(events.filter((e) => e.data.tran_no === 'TRN-SWEEP-DROPPED').map((e) => e.type), ['payment.failed']);
    assert.equal(await settleStalePayments(parts.deps), 0, 'an open transfer stays pending: the next sweep asks again and ends nothing');
    assert.equal(parts.chain.transfers.length, transfers, 'the sweep sends nothing: it reads what the chain did');
  } finally {
    await parts.dispose();
  }
});
