import { randomUUID } from 'node:crypto';
import { DomainError, isDomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import type { PaymentApproval, PosSide } from '../pairing/session-events.ts';
import type { PairedApp } from '../pairing/pairing-desk.ts';
import { quoteTokens } from '../commerce/token-quote.ts';
import { resolveSettlementToken } from '../commerce/settlement-token.ts';
import { nextApprovalNumber } from '../commerce/approval-number.ts';
import { normalizeDecimal } from '../commerce/exchange.ts';
import { paymentStaleAfterMs, paymentTransferReference, settleStalePayment } from './settle-stale-payment.ts';
import { approvalOf } from './payment-approval.ts';
import { paymentApprovedEvent, paymentFailedEvent } from '../webhooks/webhook-events.ts';

/**
 * After how long a pending payment can no longer be held by a live session anywhere: pairing window
 * + idle timeout + the relayer's receipt wait, with a margin.
 */

/**
 * Payments (by id) whose run in this process ended without recording how (the write failed: a full
 * disk), or ended pending on its transfer: nothing holds them any more, so a retry of the tran_no
 * settles them from the chain at once instead of answering 13 until the stale window has passed.
 * Per payment repository (one per composed platform); forgotten at a restart, where the stale window applies.
 */
const endedUnsettled = new WeakMap<PaymentDeps['payments'], Set<string>>();
const endedUnsettledOf = (deps: Pick<PaymentDeps, 'payments'>) => {
  let ended = endedUnsettled.get(deps.payments);
  if (!ended) endedUnsettled.set(deps.payments, ended = new Set());
  return ended;
};

/** The POS's StartPayment START_PAY: its own fields and the QR code's. */
export interface StartPaymentRequest {
  tid: string;
  tranNo: string;
  exchangeAmount: string;
  exchangeCurrency?: string;
  userUuid: string;
  contractAddress?: string;
  tokenSymbol?: string;
  userAddress?: string;
  /** Unix seconds from the QR code; 0 when absent. */
  expirationTime: number;
}

export type { PosSide };

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();

/**
 * One payment, from the POS's START_PAY to END_PAY on both streams, or one failure code on both
 * streams. Nothing is half done: tokens move only in the single wallet transfer, and a payment is
 * approved only after it; a failure before it leaves balances untouched and frees the tran_no for a
 * new attempt. A tran_no already approved answers the original approval.
 */
export async function runPayment(deps: PaymentDeps, store: StoreRecord, request: StartPaymentRequest, pos: PosSide): Promise<void> {
  try {
    await runPaymentAttempt(deps, store, request, pos);
  } catch (error) {
    // Refused before the attempt began (bad field, tid, tran_no in progress): an app still waiting
    // for this user_uuid hears it too, rather than waiting for its timeout.
    if (isDomainError(error) && request.userUuid) deps.desk.failWaitingApp(request.userUuid, { error, tranNo: request.tranNo });
    throw error;
  }
}

/** A pending attempt whose instance died (Redis desk heartbeats): nothing runs it any more, so it is settled now. */
async function runnerDied(deps: Pick<PaymentDeps, 'desk'>, payment: { runBy: string | null }): Promise<boolean> {
  const { desk } = deps;
  if (!payment.runBy || payment.runBy === desk.instanceId || !desk.isInstanceAlive) return false;
  return !(await desk.isInstanceAlive(payment.runBy));
}

async function runPaymentAttempt(deps: PaymentDeps, store: StoreRecord, request: StartPaymentRequest, pos: PosSide): Promise<void> {
  requireText(request.tranNo, 'tran_no');
  requireText(request.userUuid, 'user_uuid');
  if (request.tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  const exchangeAmount = normalizeDecimal(request.exchangeAmount, 'exchange_amount');
  const id = randomUUID();
  const claim = await deps.payments.claimTranNo({
    id, tid: store.tid, tranNo: request.tranNo, userUuid: request.userUuid, settlementAddress: store.settlementAddress,
    network: deps.network, exchangeAmount, exchangeCurrency: request.exchangeCurrency || deps.defaultCurrency, runBy: deps.desk.instanceId,
  }, deps.clock());
  if (!claim.claimed) {
    let { existing } = claim;
    const endedHere = endedUnsettledOf(deps).has(existing.id);
    if (existing.status === 'pending' && (endedHere || deps.clock() - existing.updatedAt > paymentStaleAfterMs(deps) || await runnerDied(deps, existing))) {
      const settled = await settleStalePayment(deps, existing);
      if (settled !== 'pending') endedUnsettledOf(deps).delete(existing.id);
      if (settled === 'failed') return runPaymentAttempt(deps, store, request, pos);
      if (settled === 'approved') existing = (await deps.payments.findByTranNo(store.tid, request.tranNo)) ?? existing;
    }
    if (existing.status === 'approved') {
      // A retry after a lost reply: the original approval, never a second payment. An app of this
      // user_uuid still waiting (its own session ended before it heard the outcome) is told too.
      const approval = await approvalOf(deps, existing);
      pos.send({ type: 'end_pay', approval });
      deps.desk.approveWaitingApp(request.userUuid, { type: 'end_pay', approval });
      return;
    }
    throw new DomainError('payment.in_progress', `tran_no ${request.tranNo} is in progress`, { details: 'tran_no' });
  }

  const expiresAtMs = request.expirationTime > 0 ? request.expirationTime * 1000 : Number.POSITIVE_INFINITY;
  const remaining = () => expiresAtMs - deps.clock();
  const assertLive = () => {
    if (remaining() <= 0) throw new DomainError('payment.expired', 'the QR code has expired (expiration_time)');
  };
  let app: PairedApp | undefined;
  let transferred = false;
  try {
    deps.faults?.at('payment.after-claim');
    assertLive();
    // A token that may not settle (a user's own, whatever its name) is refused before the app is
    // paired or asked to pay; quoteTokens checks it again.
    await resolveSettlementToken(deps, deps.network, {
      ...(request.contractAddress && { contractAddress: request.contractAddress }),
      ...(request.tokenSymbol && { tokenSymbol: request.tokenSymbol }),
    });
    app = await deps.desk.takeApp(request.userUuid, Math.min(deps.pairingWindowMs, remaining()), pos.signal);
    if (request.userAddress && !sameAddress(request.userAddress, app.userAddress)) {
      throw new DomainError('request.invalid', 'user_address of the QR code is not the app user\'s account', { details: 'user_address' });
    }
    const quote = await quoteTokens(deps, {
      exchangeAmount,
      ...(request.exchangeCurrency && { exchangeCurrency: request.exchangeCurrency }),
      ...(request.contractAddress && { contractAddress: request.contractAddress }),
      ...(request.tokenSymbol && { tokenSymbol: request.tokenSymbol }),
    });
    await deps.payments.recordQuote(id, {
      userAddress: app.userAddress, contractAddress: quote.contractAddress, tokenSymbol: quote.tokenSymbol,
      tokenAmount: quote.tokenUnits.toString(), exchangeRate: quote.exchangeRate, exchangeDateIndex: quote.exchangeDateIndex,
    }, deps.clock());
    const balance = await deps.wallet.getBalance(deps.network, { address: app.userAddress, contractAddress: quote.contractAddress });
    if (BigInt(balance.balanceRaw) < quote.tokenUnits) throw new DomainError('wallet.insufficient_balance', 'the user\'s balance is below token_amount');

    app.send({
      type: 'request_transfer',
      request: {
        tranNo: request.tranNo, contractAddress: quote.contractAddress, tokenSymbol: quote.tokenSymbol, tokenAmount: quote.tokenAmount,
        settlementAddress: store.settlementAddress, storeName: store.name, transferComment: `${store.name} ${request.tranNo}`,
        exchangeDateIndex: quote.exchangeDateIndex, exchangeRate: quote.exchangeRate, exchangeAmount: quote.exchangeAmount, exchangeCurrency: quote.exchangeCurrency,
      },
    });
    pos.send({ type: 'transfer_pending', tranNo: request.tranNo });
    const credentials = await app.awaitTransfer(Math.min(deps.idleTimeoutMs, remaining()), pos.signal);
    assertLive();

    // From here on the payment is carried through even if the POS hangs up; a retry finds it.
    transferred = true;
    deps.faults?.at('payment.before-transfer');
    const result = await deps.wallet.transfer(deps.network, {
      fromAddress: app.userAddress, toAddress: store.settlementAddress, amount: quote.tokenAmount,
      tempKey: credentials.tempKey, hashKey: credentials.hashKey, signature: credentials.signature,
      contractAddress: quote.contractAddress, reference: paymentTransferReference(id),
    });
    // Refused (temp key, hash key, signature, balance), or reverted and its authorization cancelled
    // on chain: nothing moved, nothing signed stays usable, the tran_no may be tried again.
    if (result.status === 'refused') transferred = false;
    if (result.status !== 'settled') throw result.error;
    deps.faults?.at('payment.after-transfer');
    const approvalNumber = await nextApprovalNumber(deps);
    let approval: PaymentApproval = {
      tranNo: request.tranNo, contractAddress: quote.contractAddress, tokenSymbol: quote.tokenSymbol, userAddress: app.userAddress,
      tokenAmount: quote.tokenAmount, transferTransactionId: result.transactionId, approvalNo: approvalNumber.number, approvalDate: approvalNumber.date,
      exchangeDateIndex: quote.exchangeDateIndex, exchangeRate: quote.exchangeRate, exchangeAmount: quote.exchangeAmount, exchangeCurrency: quote.exchangeCurrency,
    };
    if (!(await deps.payments.markApproved(id, { transferTransactionId: result.transactionId, approvalNo: approvalNumber.number, approvalDate: approvalNumber.date }, deps.clock(),
      paymentApprovedEvent(store.tid, approval)))) {
      // Settled meanwhile by a POS retry that took this run for dead: the recorded approval is the one.
      const recorded = await deps.payments.findByTranNo(store.tid, request.tranNo);
      if (recorded?.status === 'approved') approval = await approvalOf(deps, recorded);
    }
    deps.faults?.at('payment.after-approve');
    pos.send({ type: 'end_pay', approval });
    app.send({ type: 'end_pay', approval });
  } catch (error) {
    let failure = isDomainError(error) ? error : new DomainError('internal', 'the payment failed', { cause: error });
    if (!isDomainError(error)) deps.logger.error({ err: error, tid: store.tid, tranNo: request.tranNo }, 'payment failed');
    // A transfer not settled on chain, or settled and then not recorded, leaves the tran_no pending
    // (never reusable, never approved unconfirmed): its next retry settles it from the chain; the POS
    // sees 10 until then, never "nothing moved" (23).
    if (transferred) {
      if (failure.code === 'store.full') failure = new DomainError('internal', 'the payment\'s outcome could not be recorded', { cause: error });
      endedUnsettledOf(deps).add(id);
    } else {
      await deps.payments.markFailed(id, failure.code, deps.clock(), paymentFailedEvent({
        tid: store.tid, tranNo: request.tranNo, exchangeAmount, exchangeCurrency: request.exchangeCurrency || deps.defaultCurrency,
      }, failure.code)).catch((unrecorded: unknown) => {
        // Nothing moved, but the disk is too full to say so: a retry records it failed and runs again.
        deps.logger.warn({ err: unrecorded, tid: store.tid, tranNo: request.tranNo }, 'failed payment not recorded');
        endedUnsettledOf(deps).add(id);
      });
    }
    if (app) app.send({ type: 'failed', error: failure, tranNo: request.tranNo });
    else deps.desk.failWaitingApp(request.userUuid, { error: failure, tranNo: request.tranNo });
    pos.send({ type: 'failed', error: failure, tranNo: request.tranNo });
  }
}

function requireText(value: string, field: string): void {
  if (typeof value !== 'string' || value.length === 0 || value.length > 128) {
    throw new DomainError('request.invalid', `${field} is required (at most 128 characters)`, { details: field });
  }
}
