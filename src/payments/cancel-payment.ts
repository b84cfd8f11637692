import { randomUUID } from 'node:crypto';
import { formatTokenAmount, parseTokenAmount } from '../shared/amount.ts';
import { DomainError } from '../shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { nextApprovalNumber } from './approval-number.ts';
import { resolveSettlementToken } from './settlement-token.ts';
import { oncePerTranNo } from './once-per-tran-no.ts';
import { paymentCanceledEvent } from '../webhooks/webhook-events.ts';
import { failpoint } from '../shared/failpoints.ts';

export interface CancelPaymentRequest {
  tid: string;
  /** The approval's token transfer. */
  transferTransactionId: string;
  /** Tokens to refund; empty refunds everything not refunded yet. */
  tokenAmount?: string;
  exchangeAmount?: string;
  userAddress?: string;
  /** The POS's contract_address: when given, must be the payment's token (and a settlement token). */
  contractAddress?: string;
  /** The call's `common.tran_no`: when given, the cancellation runs once for it (see once-per-tran-no.ts). */
  tranNo?: string;
}

export interface PaymentCancellation {
  contractAddress: string;
  tokenSymbol: string;
  userAddress: string;
  tokenAmount: string;
  exchangeAmount: string;
  /** The store-to-user refund transfer. */
  transferTransactionId: string;
  /** Cancellation number and date. */
  approvalNo: string;
  approvalDate: string;
}

type CancelPaymentDeps = Pick<PaymentDeps, 'payments' | 'merchants' | 'wallet' | 'settlementTokens' | 'network' | 'clock' | 'timeZone' | 'idempotency'>;

/**
 * CancelPayment: with a `tranNo`, a retry after a lost reply answers the first cancellation again
 * and refunds nothing more; the same tran_no with other parameters is refused.
 */
export async function cancelPayment(deps: CancelPaymentDeps, store: StoreRecord, request: CancelPaymentRequest): Promise<PaymentCancellation> {
  const { tranNo, ...parameters } = request;
  return oncePerTranNo(deps, { tid: store.tid, call: 'cancelPayment', tranNo, request: { ...parameters } }, () => refundPayment(deps, store, parameters));
}

/**
 * Refunds an approved payment of this store from its settlement account to the payer. Partial
 * cancellations are allowed; their total never exceeds what was paid (the refunded total is
 * reserved by compare-and-set before the transfer and released if the transfer fails). Once
 * everything is refunded a further cancellation is `payment.already_canceled`.
 */
async function refundPayment(deps: CancelPaymentDeps, store: StoreRecord, request: CancelPaymentRequest): Promise<PaymentCancellation> {
  if (request.tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  if (!request.transferTransactionId) throw new DomainError('request.invalid', 'transfer_transaction_id is required', { details: 'transfer_transaction_id' });
  // Several payments can share one transfer transaction (a settlement batch): the store's payment
  // whose payer the POS names; without user_address, the transaction must carry only one payer's.
  // Two payments of one payer in one batch are the same to the POS: the oldest with something left
  // to refund is refunded first.
  const candidates = (await deps.payments.findApprovedByTransferTransaction(store.tid, request.transferTransactionId))
    .filter((p) => p.userAddress && p.tokenAmount);
  // Another store's payment is "not found" too: a POS learns nothing about other stores.
  if (candidates.length === 0) throw new DomainError('payment.not_found', 'no approved payment of this store with this transfer_transaction_id');
  const payers = new Set(candidates.map((p) => p.userAddress!.toLowerCase()));
  if (request.userAddress && !payers.has(request.userAddress.toLowerCase())) {
    throw new DomainError('request.invalid', 'user_address is not the payer of this payment', { details: 'user_address' });
  }
  if (!request.userAddress && payers.size > 1) {
    throw new DomainError('request.invalid', 'this transfer transaction carries payments of several users: send user_address', { details: 'user_address' });
  }
  const ofPayer = candidates.filter((p) => !request.userAddress || p.userAddress!.toLowerCase() === request.userAddress.toLowerCase());
  const chosen = ofPayer.find((p) => BigInt(p.refundedAmount) < BigInt(p.tokenAmount!)) ?? ofPayer[0]!;
  const load = async () => {
    const payment = await deps.payments.findByTranNo(chosen.tid, chosen.tranNo);
    if (!payment || payment.status !== 'approved' || !payment.userAddress || !payment.tokenAmount) {
      throw new DomainError('payment.not_found', 'no approved payment of this store with this transfer_transaction_id');
    }
    return { ...payment, userAddress: payment.userAddress, tokenAmount: payment.tokenAmount };
  };
  let payment = await load();
  // A refund moves the payment's own token, and only while it is a settlement token (VIXP or allowed):
  // a contract the POS names is refused unless it is that token.
  const named = request.contractAddress ? await resolveSettlementToken(deps, deps.network, { contractAddress: request.contractAddress }) : undefined;
  const token = await resolveSettlementToken(deps, deps.network, { ...(payment.contractAddress && { contractAddress: payment.contractAddress }) });
  if (named && named.contractAddress !== token.contractAddress) {
    throw new DomainError('request.invalid', 'contract_address is not the token of this payment', { details: 'contract_address' });
  }

  // Reserve the refund: compare-and-set on the refunded total, retried when another cancellation won.
  let units = 0n;
  for (let attempt = 0; ; attempt++) {
    const paid = BigInt(payment.tokenAmount);
    const refunded = BigInt(payment.refundedAmount);
    if (refunded >= paid) throw new DomainError('payment.already_canceled', 'this payment is already fully canceled');
    units = request.tokenAmount ? parseTokenAmount(request.tokenAmount, token.decimals, 'token_amount') : paid - refunded;
    if (units > paid - refunded) {
      throw new DomainError('payment.bad_cancel_amount', `token_amount exceeds what is left to refund (${formatTokenAmount(paid - refunded, token.decimals)})`);
    }
    if (await deps.payments.setRefunded(payment.id, payment.refundedAmount, (refunded + units).toString(), deps.clock())) break;
    if (attempt > 20) throw new DomainError('internal', 'could not reserve the refund');
    payment = await load();
  }
  failpoint('cancel.after-reserve');
  const release = async () => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const current = await load();
      const next = (BigInt(current.refundedAmount) - units).toString();
      if (await deps.payments.setRefunded(current.id, current.refundedAmount, next, deps.clock())) return;
    }
  };

  const cancellationId = randomUUID();
  const full = units === BigInt(payment.tokenAmount);
  const exchangeAmount = full ? payment.exchangeAmount : (request.exchangeAmount ?? '');
  await deps.payments.insertCancellation({ id: cancellationId, paymentId: payment.id, tokenAmount: units.toString(), exchangeAmount: exchangeAmount || null }, deps.clock());
  const tokenAmount = formatTokenAmount(units, token.decimals);
  failpoint('cancel.before-transfer');
  const refund = await deps.wallet.transferFromCustody(deps.network, {
    fromAddress: store.settlementAddress, toAddress: payment.userAddress, amount: tokenAmount,
    contractAddress: token.contractAddress, reference: `payment-cancel:${cancellationId}`,
  });
  if (refund.status !== 'settled') {
    // Only a refund that moved nothing frees its amount; one the chain has not settled yet stays
    // reserved (and the cancellation pending), so a second cancellation cannot refund it again.
    if (refund.status === 'refused') {
      await deps.payments.failCancellation(cancellationId, deps.clock());
      await release();
    }
    throw refund.error;
  }
  failpoint('cancel.after-transfer');
  const number = await nextApprovalNumber(deps);
  const cancellation: PaymentCancellation = {
    contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, userAddress: payment.userAddress, tokenAmount, exchangeAmount,
    transferTransactionId: refund.transactionId, approvalNo: number.number, approvalDate: number.date,
  };
  await deps.payments.completeCancellation(cancellationId, { transferTransactionId: refund.transactionId, cancelNo: number.number, cancelDate: number.date }, deps.clock(),
    paymentCanceledEvent({ tid: payment.tid, tranNo: payment.tranNo, transferTransactionId: request.transferTransactionId }, cancellation));
  return cancellation;
}
