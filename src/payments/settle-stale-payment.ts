import type { PaymentRecord } from '../store/payment-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { nextApprovalNumber } from './approval-number.ts';

/** The journal reference of a payment's transfer. */
export const paymentTransferReference = (paymentId: string) => `payment:${paymentId}`;

/**
 * A payment still pending long after any live session could hold it (the instance running it
 * stopped mid-flight). Its fate is in the transfer journal: a confirmed transfer makes it approved
 * (a new approval number, the journaled transaction); no transfer, or a failed one, makes it failed
 * so the tran_no can be tried again; a transfer still unconfirmed leaves it pending.
 */
export async function settleStalePayment(
  deps: Pick<PaymentDeps, 'payments' | 'merchants' | 'clock' | 'timeZone' | 'logger'>,
  payment: PaymentRecord,
): Promise<'approved' | 'failed' | 'pending'> {
  const journaled = await deps.payments.findJournaledTransfer(paymentTransferReference(payment.id));
  if (journaled?.status === 'signed') return 'pending';
  if (journaled?.status === 'confirmed') {
    const number = await nextApprovalNumber(deps);
    await deps.payments.markApproved(payment.id, { transferTransactionId: journaled.txHash, approvalNo: number.number, approvalDate: number.date }, deps.clock());
    deps.logger.warn({ paymentId: payment.id, tid: payment.tid, tranNo: payment.tranNo }, 'stale payment approved from its journaled transfer');
    return 'approved';
  }
  await deps.payments.markFailed(payment.id, 'internal', deps.clock());
  deps.logger.warn({ paymentId: payment.id, tid: payment.tid, tranNo: payment.tranNo }, 'stale payment without a transfer marked failed');
  return 'failed';
}
