import type { SupportedResponse, VerifyResponse } from '@x402/core/types';
import { errorSummary } from '#shared/redact.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { FacilitatorKeyRecord } from '../store/facilitator-key-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { verifyPayment } from './verify-payment.ts';
import { resendAfterMs, settlePayment, type Carrier, type SettleAnswer, type SettleOptions } from './settle-payment.ts';
import { carrySettlement } from './carry-settlement.ts';
import { observeSettlement } from './observe-settlement.ts';
import { settlementReceipt, settlementStatus, type AskingKey, type X402SettlementStatus } from './settlement-status.ts';
import { issueReceipt } from './finish-settlement.ts';
import { supportedKinds } from './supported.ts';
import { authenticateFacilitatorKey } from './facilitator-keys.ts';
import { claimPaymentId, lookUpPaymentId, paymentIdentifierOf, type IdScope } from './payment-identifier.ts';
import { repeatedPaymentVerdict, settlementIdOf } from './repeated-payment.ts';

/**
 * A verify's answer; `conflict`: its payment id names another request (the payment-identifier
 * extension's 409).
 */
export interface VerifyAnswer { response: VerifyResponse; conflict?: boolean }

/** A settle's answer; `conflict` as for verify. */
export type FacilitatorSettleAnswer = SettleAnswer & { conflict?: boolean };

/** The settle options, and the store of the key asking (its payment ids are the store's). */
export type FacilitatorSettleOptions = SettleOptions & { tid?: string | null };

const conflictMessage = 'this payment-identifier id was used with another payment or requirements: use a new id for a new payment';

/** The x402 facilitator (docs/x402.md), as the HTTP transport uses it. */
export interface X402Facilitator {
  supported(): Promise<SupportedResponse>;
  /** `key`: the facilitator key asking (its store's payment ids); without it the payment-identifier extension is not looked at. */
  verify(body: unknown, key?: IdScope): Promise<VerifyAnswer>;
  settle(body: unknown, options: FacilitatorSettleOptions): Promise<FacilitatorSettleAnswer>;
  /** Where a settlement stands, for the key that settled it or another key of its store; undefined otherwise. */
  status(payer: string, nonce: string, key: AskingKey): Promise<X402SettlementStatus | undefined>;
  /** The receipt of a settled settlement, for the same keys; undefined otherwise or before it is issued. */
  receipt(payer: string, nonce: string, key: AskingKey): Promise<Record<string, unknown> | undefined>;
  authenticate(key: string): Promise<FacilitatorKeyRecord | undefined>;
  /**
   * Finishes settlements left accepted (a crash between accepting and journaling, a node that did
   * not answer, a receipt that came after the wait): each not sent yet and untouched for `minAgeMs`
   * is sent again, each journaled one is recorded once its authorization has ended. Then issues the
   * receipts that settlements accepted since `receiptsSince` (default: the last hour) and settled
   * lack (a crash between the record and its receipt, a DID key store that failed). Answers how many
   * accepted settlements it looked at.
   */
  sweep(minAgeMs?: number, receiptsSince?: number): Promise<number>;
}

/** A settle refused before anything is looked up (the payment-identifier extension's refusals). */
function invalidSettle(body: unknown, errorMessage: string, errorReason = 'invalid_payload'): SettleAnswer {
  const network = String((body as { paymentRequirements?: { network?: unknown } } | null)?.paymentRequirements?.network ?? '');
  return { response: { success: false, errorReason, errorMessage, transaction: '', network: network as SettleAnswer['response']['network'] }, pending: false };
}

/** The periodic sweep looks this far back for settlements without their receipt; the sweep at start, at all of them. */
const receiptCatchUpMs = 3_600_000;

export function createX402Facilitator(deps: X402Deps): X402Facilitator {
  const running = new Map<string, Promise<void>>();
  const carrier: Carrier = {
    carry(record: X402SettlementRecord) {
      const current = running.get(record.id);
      if (current) return current;
      const attempt = carrySettlement(deps, record)
        .catch((err: unknown) => deps.logger.warn({ nonce: record.nonce, reason: errorSummary(err) }, 'x402 settlement attempt failed; the sweep retries it'))
        .finally(() => running.delete(record.id));
      running.set(record.id, attempt);
      return attempt;
    },
    running: (id) => running.get(id),
  };
  return {
    supported: () => supportedKinds(deps),
    async verify(body, key) {
      // The payment-identifier extension: an id bound to another request is a conflict (409); the same
      // request again, once settled, is still valid (its stored result). Verify binds no id.
      const paymentId = key && deps.paymentIds ? paymentIdentifierOf(body, key) : { kind: 'none' as const };
      if (paymentId.kind === 'invalid') return { response: { isValid: false, invalidReason: 'invalid_payload', invalidMessage: paymentId.message } };
      const state = paymentId.kind === 'id' && deps.paymentIds ? await lookUpPaymentId(deps.paymentIds, paymentId, deps.clock()) : undefined;
      if (state?.kind === 'conflict') return { response: { isValid: false, invalidReason: 'payment_identifier_conflict', invalidMessage: conflictMessage }, conflict: true };
      const repeated = await repeatedPaymentVerdict(deps, body, state?.kind === 'same');
      if (repeated) return { response: repeated };
      return { response: (await verifyPayment(deps, body)).response };
    },
    async settle(body, options) {
      const paymentId = deps.paymentIds ? paymentIdentifierOf(body, { keyId: options.keyId, tid: options.tid }) : { kind: 'none' as const };
      if (paymentId.kind === 'invalid') return invalidSettle(body, paymentId.message);
      if (paymentId.kind === 'id' && deps.paymentIds) {
        // Bound before anything is accepted: of two payments under one id, one is settled, the other 409.
        const state = await claimPaymentId(deps.paymentIds, paymentId, deps.clock());
        if (state.kind === 'conflict') return { ...invalidSettle(body, conflictMessage, 'payment_identifier_conflict'), conflict: true };
        if (state.kind === 'same' && state.answer !== undefined) return { response: state.answer as SettleAnswer['response'], pending: false };
      }
      const answer = await settlePayment(deps, carrier, body, options);
      const settlementId = settlementIdOf(deps, body);
      if (answer.response.success && settlementId) await deps.answers?.markAnswered(settlementId, options.keyId, deps.clock());
      if (paymentId.kind === 'id' && deps.paymentIds && !answer.pending) {
        // Its final answer is kept once the payment was accepted (settled, or failed on chain); a refusal
        // before that binds nothing: the id may carry a corrected payment.
        const record = settlementId ? await deps.settlements.find(settlementId) : undefined;
        if (answer.response.success || record?.status === 'failed') {
          await deps.paymentIds.record(paymentId.scope, paymentId.id, 'done', JSON.stringify(answer.response), deps.clock());
        } else {
          await deps.paymentIds.release(paymentId.scope, paymentId.id);
        }
      }
      return answer;
    },
    status: (payer, nonce, key) => settlementStatus(deps, payer, nonce, key),
    receipt: (payer, nonce, key) => settlementReceipt(deps, payer, nonce, key),
    authenticate: (key) => authenticateFacilitatorKey(deps, key),
    async sweep(minAgeMs = resendAfterMs, receiptsSince = deps.clock() - receiptCatchUpMs) {
      const accepted = await deps.settlements.listAccepted(deps.clock() - minAgeMs, 500);
      const resent: Array<Promise<void>> = [];
      for (const record of accepted) {
        if (running.has(record.id)) continue;
        // One row never stops the sweep: whatever it throws is logged, and the next row is looked at.
        try {
          if ((await observeSettlement(deps, record)) === 'resend') resent.push(carrier.carry(record));
        } catch (err) {
          deps.logger.warn({ nonce: record.nonce, reason: errorSummary(err) }, 'x402 settlement not swept; the next sweep looks again');
        }
      }
      await Promise.all(resent);
      for (const id of (await deps.receipts?.missing(receiptsSince, 100)) ?? []) await issueReceipt(deps, id);
      return accepted.length;
    },
  };
}
