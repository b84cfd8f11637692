import { DomainError, domainErrorCodes, type DomainErrorCode } from '#shared/errors.ts';
import { formatTokenAmount } from '#shared/amount.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import type { PaymentApproval } from '../pairing/session-events.ts';
import { approvalOf } from './payment-approval.ts';
import { paymentStaleAfterMs, settleStalePayment } from './settle-stale-payment.ts';

/** A refund of a payment (CancelPayment), as its status shows it. */
export interface PaymentRefund {
  tokenAmount: string;
  transferTransactionId: string;
  /** Cancellation number and date. */
  approvalNo: string;
  approvalDate: string;
}

/**
 * A store's payment by its tran_no: `pending` (pairing, waiting for the app, or its transfer not
 * settled on chain), `approved` with END_PAY's fields, or `failed` with the failure's domain code
 * (the transport names its res_code). Approved payments list their completed refunds.
 */
export type PaymentStatus = PaymentApproval & {
  tid: string;
  status: 'pending' | 'approved' | 'failed';
  failureCode?: DomainErrorCode;
  /** Token units refunded by cancellations so far. */
  refundedAmount: string;
  refunds: PaymentRefund[];
};

type StatusDeps = Pick<PaymentDeps, 'payments' | 'merchants' | 'wallet' | 'network' | 'clock' | 'timeZone' | 'logger' | 'pairingWindowMs' | 'idleTimeoutMs'>;

/**
 * The status of this store's payment `tranNo` (its latest attempt). A payment left pending longer
 * than any live session could hold it is first settled from its transfer's authorization, exactly
 * as a POS retry of the tran_no would settle it, so the answer is the truth on chain.
 */
export async function paymentStatus(deps: StatusDeps, store: StoreRecord, tid: string, tranNo: string): Promise<PaymentStatus> {
  if (tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  let payment = await deps.payments.findByTranNo(store.tid, tranNo);
  if (!payment) throw new DomainError('payment.not_found', `no payment of this store with tran_no ${tranNo.slice(0, 128)}`);
  if (payment.status === 'pending' && deps.clock() - payment.updatedAt > paymentStaleAfterMs(deps)) {
    await settleStalePayment(deps, payment);
    payment = (await deps.payments.findByTranNo(store.tid, tranNo)) ?? payment;
  }
  const approval = await approvalOf(deps, payment);
  const token = await deps.wallet.getTokenInfo(deps.network, { contractAddress: approval.contractAddress });
  const refunds = payment.status === 'approved' ? await deps.payments.listCancellations(payment.id) : [];
  const failureCode = payment.failureCode && (domainErrorCodes as readonly string[]).includes(payment.failureCode)
    ? payment.failureCode as DomainErrorCode : payment.status === 'failed' ? 'internal' : undefined;
  return {
    ...approval, tid: payment.tid, status: payment.status,
    // Quote fields exist once the rate notice was applied; a payment that failed before has none.
    ...(payment.tokenAmount === null && { tokenAmount: '' }),
    ...(failureCode && { failureCode }),
    refundedAmount: formatTokenAmount(BigInt(payment.refundedAmount), token.decimals),
    refunds: refunds.map((r) => ({
      // Stryker disable next-line StringLiteral: unreachable, a done cancellation (the only kind listed) has its transaction, number and date
      tokenAmount: formatTokenAmount(BigInt(r.tokenAmount), token.decimals), transferTransactionId: r.transferTransactionId ?? '',
      // Stryker disable next-line StringLiteral: unreachable, as above
      approvalNo: r.cancelNo ?? '', approvalDate: r.cancelDate ?? '',
    })),
  };
}
