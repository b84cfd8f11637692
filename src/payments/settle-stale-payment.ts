import type { PaymentRecord } from '../store/payment-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { nextApprovalNumber } from '../commerce/approval-number.ts';
import { approvalOf } from './payment-approval.ts';
import { paymentApprovedEvent, paymentFailedEvent } from '../webhooks/webhook-events.ts';

/** The reference of a payment attempt's transfer: it derives the transfer's authorization nonce. */
export const paymentTransferReference = (paymentId: string) => `payment:${paymentId}`;

/**
 * How long a pending payment can still be held by a live session: the pairing window, the app's idle
 * timeout and 5 minutes for its transfer. Past it, a POS retry, a status lookup and the sweep settle
 * the payment from the chain.
 */
export const paymentStaleAfterMs = (deps: Pick<PaymentDeps, 'pairingWindowMs' | 'idleTimeoutMs'>) => deps.pairingWindowMs + deps.idleTimeoutMs + 5 * 60_000;

/**
 * A payment still pending long after any live session could hold it (the instance running it
 * stopped mid-flight, or the chain had not settled its transfer). Its fate is its transfer's
 * authorization on chain: used makes it approved (a new approval number, the transaction that
 * carried it); never made, cancelled or expired makes it failed so the tran_no can be tried again;
 * still able to execute leaves it pending.
 */
export async function settleStalePayment(
  deps: Pick<PaymentDeps, 'payments' | 'merchants' | 'wallet' | 'network' | 'clock' | 'timeZone' | 'logger'>,
  payment: PaymentRecord,
): Promise<'approved' | 'failed' | 'pending'> {
  const outcome = await deps.wallet.transferOutcome(deps.network, paymentTransferReference(payment.id));
  if (outcome.status === 'open') return 'pending';
  if (outcome.status === 'used') {
    const number = await nextApprovalNumber(deps);
    const done = { transferTransactionId: outcome.txHash, approvalNo: number.number, approvalDate: number.date };
    const approval = await approvalOf(deps, { ...payment, ...done, status: 'approved' });
    if (!(await deps.payments.markApproved(payment.id, done, deps.clock(), paymentApprovedEvent(payment.tid, approval)))) {
      // Settled meanwhile (another POS retry of the tran_no, on another instance): its approval is the one.
      return (await deps.payments.findByTranNo(payment.tid, payment.tranNo))?.status === 'approved' ? 'approved' : 'pending';
    }
    deps.logger.warn({ paymentId: payment.id, tid: payment.tid, tranNo: payment.tranNo }, 'stale payment approved from its executed transfer');
    return 'approved';
  }
  await deps.payments.markFailed(payment.id, 'internal', deps.clock(), paymentFailedEvent(payment, 'internal'));
  deps.logger.warn({ paymentId: payment.id, tid: payment.tid, tranNo: payment.tranNo, transfer: outcome.status }, 'stale payment without a transfer marked failed');
  return 'failed';
}

/**
 * Settles every payment left pending past its stale window (the periodic sweep): a run cut off after
 * its transfer was mined is approved (its payment.approved event sent, its statement line a payment's)
 * though the POS never retries and nobody asks; answers how many ended.
 */
export async function settleStalePayments(
  deps: Parameters<typeof settleStalePayment>[0] & Pick<PaymentDeps, 'pairingWindowMs' | 'idleTimeoutMs'>,
): Promise<number> {
  let ended = 0;
  for (const payment of await deps.payments.listStalePayments(deps.clock() - paymentStaleAfterMs(deps))) {
    if ((await settleStalePayment(deps, payment)) !== 'pending') ended++;
  }
  return ended;
}
