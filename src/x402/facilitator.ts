import type { SupportedResponse, VerifyResponse } from '@x402/core/types';
import { errorSummary } from '#shared/redact.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { FacilitatorKeyRecord } from '../store/facilitator-key-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { verifyPayment } from './verify-payment.ts';
import { resendAfterMs, settlePayment, type Carrier, type SettleAnswer, type SettleOptions } from './settle-payment.ts';
import { carrySettlement } from './carry-settlement.ts';
import { observeSettlement } from './observe-settlement.ts';
import { settlementStatus, type X402SettlementStatus } from './settlement-status.ts';
import { supportedKinds } from './supported.ts';
import { authenticateFacilitatorKey } from './facilitator-keys.ts';

/** The x402 facilitator (docs/x402.md), as the HTTP transport uses it. */
export interface X402Facilitator {
  supported(): Promise<SupportedResponse>;
  verify(body: unknown): Promise<VerifyResponse>;
  settle(body: unknown, options: SettleOptions): Promise<SettleAnswer>;
  status(payer: string, nonce: string): Promise<X402SettlementStatus | undefined>;
  authenticate(key: string): Promise<FacilitatorKeyRecord | undefined>;
  /**
   * Finishes settlements left accepted (a crash between accepting and journaling, a node that did
   * not answer, a receipt that came after the wait): each not sent yet and untouched for `minAgeMs`
   * is sent again, each journaled one is recorded once its authorization has ended. Answers how many
   * it looked at.
   */
  sweep(minAgeMs?: number): Promise<number>;
}

export function createX402Facilitator(deps: X402Deps): X402Facilitator {
  const running = new Map<string, Promise<void>>();
  const carrier: Carrier = {
    carry(record: X402SettlementRecord) {
      const current = running.get(record.nonce);
      if (current) return current;
      const attempt = carrySettlement(deps, record)
        .catch((err: unknown) => deps.logger.warn({ nonce: record.nonce, reason: errorSummary(err) }, 'x402 settlement attempt failed; the sweep retries it'))
        .finally(() => running.delete(record.nonce));
      running.set(record.nonce, attempt);
      return attempt;
    },
    running: (nonce) => running.get(nonce),
  };
  return {
    supported: () => supportedKinds(deps),
    async verify(body) {
      return (await verifyPayment(deps, body)).response;
    },
    settle: (body, options) => settlePayment(deps, carrier, body, options),
    status: (payer, nonce) => settlementStatus(deps, payer, nonce),
    authenticate: (key) => authenticateFacilitatorKey(deps, key),
    async sweep(minAgeMs = resendAfterMs) {
      const accepted = await deps.settlements.listAccepted(deps.clock() - minAgeMs, 500);
      const resent: Array<Promise<void>> = [];
      for (const record of accepted) {
        if (running.has(record.nonce)) continue;
        if ((await observeSettlement(deps, record)) === 'resend') resent.push(carrier.carry(record));
      }
      await Promise.all(resent);
      return accepted.length;
    },
  };
}
