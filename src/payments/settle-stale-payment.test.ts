import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits } from 'viem';
import { runPayment } from './run-payment.ts';
import { paymentTransferReference } from './settle-stale-payment.ts';
import type { SessionEvent } from '../pairing/session-events.ts';
import { connectApp, openPaymentsParts, posSide } from '../../test/support/payments-parts.ts';

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
