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

/** The x402 facilitator (docs/x402.md), as the HTTP transport uses it. */
export interface X402Facilitator {
  supported(): Promise<SupportedResponse>;
  verify(body: unknown): Promise<VerifyResponse>;
  settle(body: unknown, options: SettleOptions): Promise<SettleAnswer>;
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
    async verify(body) {
      return (await verifyPayment(deps, body)).response;
    },
    settle: (body, options) => settlePayment(deps, carrier, body, options),
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
