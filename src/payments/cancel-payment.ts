import { randomUUID } from 'node:crypto';
import { formatTokenAmount, parseTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { PaymentRecord } from '../store/payment-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { nextApprovalNumber } from '../commerce/approval-number.ts';
import { resolveSettlementToken } from '../commerce/settlement-token.ts';
import { oncePerTranNo, type StaleAttempt } from '../commerce/once-per-tran-no.ts';
import { paymentCanceledEvent } from '../webhooks/webhook-events.ts';

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

type CancelPaymentDeps = Pick<PaymentDeps, 'payments' | 'merchants' | 'wallet' | 'settlementTokens' | 'network' | 'clock' | 'timeZone' | 'idempotency' | 'staleOperationMs' | 'faults'>;

/** The reference of a cancellation's refund transfer: it derives the transfer's authorization nonce. */
export const refundTransferReference = (cancellationId: string) => `payment-cancel:${cancellationId}`;

/**
 * CancelPayment: with a `tranNo`, a retry after a lost reply answers the first cancellation again
 * and refunds nothing more; the same tran_no with other parameters is refused. A retry of one
 * interrupted mid-run (its instance stopped) answers it as its refund ended on chain, or runs it
 * again if nothing moved (settleStaleCancellation).
 */
export async function cancelPayment(deps: CancelPaymentDeps, store: StoreRecord, request: CancelPaymentRequest): Promise<PaymentCancellation> {
  const { tranNo, ...parameters } = request;
  const cancellationId = randomUUID();
  return oncePerTranNo(deps, {
    tid: store.tid, call: 'cancelPayment', tranNo, request: { ...parameters },
    reference: cancellationId, settleStale: (interrupted) => settleStaleCancellation(deps, interrupted),
  }, () => refundPayment(deps, store, parameters, cancellationId));
}

/**
 * Refunds an approved payment of this store from its settlement account to the payer. Partial
 * cancellations are allowed; their total never exceeds what was paid (the refunded total is
 * reserved by compare-and-set before the transfer and released if the transfer fails). Once
 * everything is refunded a further cancellation is `payment.already_canceled`.
 */
async function refundPayment(deps: CancelPaymentDeps, store: StoreRecord, request: CancelPaymentRequest, cancellationId: string): Promise<PaymentCancellation> {
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

  // Reserve the refund with its pending cancellation: compare-and-set on the refunded total, retried
  // when another cancellation won.
  let units: bigint;
  let exchangeAmount: string;
  for (let attempt = 0; ; attempt++) {
    const paid = BigInt(payment.tokenAmount);
    const refunded = BigInt(payment.refundedAmount);
    if (refunded >= paid) throw new DomainError('payment.already_canceled', 'this payment is already fully canceled');
    units = request.tokenAmount ? parseTokenAmount(request.tokenAmount, token.decimals, 'token_amount') : paid - refunded;
    if (units > paid - refunded) {
      throw new DomainError('payment.bad_cancel_amount', `token_amount exceeds what is left to refund (${formatTokenAmount(paid - refunded, token.decimals)})`);
    }
    exchangeAmount = units === paid ? payment.exchangeAmount : (request.exchangeAmount ?? '');
    const cancellation = { id: cancellationId, tokenAmount: units.toString(), exchangeAmount: exchangeAmount || null };
    if (await deps.payments.reserveRefund(payment.id, payment.refundedAmount, (refunded + units).toString(), cancellation, deps.clock())) break;
    if (attempt > 20) throw new DomainError('internal', 'could not reserve the refund');
    payment = await load();
  }
  deps.faults?.at('cancel.after-reserve');
  const tokenAmount = formatTokenAmount(units, token.decimals);
  deps.faults?.at('cancel.before-transfer');
  const refund = await deps.wallet.transferFromCustody(deps.network, {
    fromAddress: store.settlementAddress, toAddress: payment.userAddress, amount: tokenAmount,
    contractAddress: token.contractAddress, reference: refundTransferReference(cancellationId),
  });
  if (refund.status !== 'settled') {
    // Only a refund that moved nothing frees its amount; one the chain has not settled yet stays
    // reserved (and the cancellation pending), so a second cancellation cannot refund it again.
    if (refund.status === 'refused') await deps.payments.failCancellation(cancellationId, deps.clock());
    throw refund.error;
  }
  deps.faults?.at('cancel.after-transfer');
  return completeRefund(deps, payment, { id: cancellationId, tokenAmount: units.toString(), exchangeAmount }, token, refund.transactionId);
}

/** Numbers a refund that moved and records it (the store's webhook in the same transaction). */
async function completeRefund(deps: CancelPaymentDeps, payment: PaymentRecord & { userAddress: string },
  cancellation: { id: string; tokenAmount: string; exchangeAmount: string }, token: { contractAddress: string; tokenSymbol: string; decimals: number }, refundTx: string): Promise<PaymentCancellation> {
  const number = await nextApprovalNumber(deps);
  const answer: PaymentCancellation = {
    contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, userAddress: payment.userAddress,
    tokenAmount: formatTokenAmount(BigInt(cancellation.tokenAmount), token.decimals), exchangeAmount: cancellation.exchangeAmount,
    transferTransactionId: refundTx, approvalNo: number.number, approvalDate: number.date,
  };
  const recorded = await deps.payments.completeCancellation(cancellation.id, { transferTransactionId: refundTx, cancelNo: number.number, cancelDate: number.date }, deps.clock(),
    // Stryker disable next-line StringLiteral: unreachable, an approved payment (the only kind refunded) has its transfer transaction
    paymentCanceledEvent({ tid: payment.tid, tranNo: payment.tranNo, transferTransactionId: payment.transferTransactionId ?? '' }, answer));
  if (recorded) return answer;
  // Settled meanwhile by another instance's sweep or retry: its numbers are the cancellation's.
  const stored = await deps.payments.findCancellation(cancellation.id);
  return { ...answer, approvalNo: stored?.cancelNo ?? answer.approvalNo, approvalDate: stored?.cancelDate ?? answer.approvalDate };
}

/**
 * A cancellation interrupted mid-run (its instance stopped) and stale: its refund's authorization
 * decides. Used on chain: the cancellation completes (numbered now) and is answered. Never signed,
 * cancelled or expired: it fails, its amount is refundable again, and the call may run again. Still
 * able to execute: pending. Run by the POS's retry of its tran_no and by the periodic sweep.
 */
export async function settleStaleCancellation(deps: CancelPaymentDeps, cancellationId: string): Promise<StaleAttempt<PaymentCancellation>> {
  const cancellation = await deps.payments.findCancellation(cancellationId);
  if (!cancellation || cancellation.status === 'failed') return 'rerun';
  const payment = await deps.payments.findPayment(cancellation.paymentId);
  if (!payment?.userAddress || !payment.contractAddress) return 'pending';
  const token = await deps.wallet.getTokenInfo(deps.network, { contractAddress: payment.contractAddress });
  const paid = { ...payment, userAddress: payment.userAddress };
  const settled = { id: cancellation.id, tokenAmount: cancellation.tokenAmount, exchangeAmount: cancellation.exchangeAmount ?? '' };
  if (cancellation.status === 'done') {
    return { outcome: {
      contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, userAddress: payment.userAddress,
      tokenAmount: formatTokenAmount(BigInt(cancellation.tokenAmount), token.decimals), exchangeAmount: settled.exchangeAmount,
      // Stryker disable next-line StringLiteral: unreachable, a done cancellation has its transaction, number and date (completeCancellation writes them together)
      transferTransactionId: cancellation.transferTransactionId ?? '', approvalNo: cancellation.cancelNo ?? '', approvalDate: cancellation.cancelDate ?? '',
    } };
  }
  const refund = await deps.wallet.transferOutcome(deps.network, refundTransferReference(cancellation.id));
  if (refund.status === 'open') return 'pending';
  if (refund.status === 'used') return { outcome: await completeRefund(deps, paid, settled, token, refund.txHash) };
  // Stryker disable next-line BooleanLiteral: equivalent, the chain says this refund can never execute, so no one completes it; failCancellation is false only when another sweep failed it first, and then both ways answer 'rerun'
  if (!(await deps.payments.failCancellation(cancellation.id, deps.clock()))) return settleStaleCancellation(deps, cancellationId);
  return 'rerun';
}

/** Settles every cancellation left pending by an interrupted run (the periodic sweep); answers how many ended. */
export async function settleStaleCancellations(deps: CancelPaymentDeps): Promise<number> {
  let ended = 0;
  for (const cancellation of await deps.payments.listStaleCancellations(deps.clock() - deps.staleOperationMs)) {
    if ((await settleStaleCancellation(deps, cancellation.id)) !== 'pending') ended++;
  }
  return ended;
}
