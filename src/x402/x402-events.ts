import type { NewWebhookEvent } from '../store/webhook-repository.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';

/**
 * The webhook event of an x402 settlement that ended, for the store its facilitator key belongs to
 * (docs/x402.md "Events"): `x402.settled` with the transaction, or `x402.failed` with the reason.
 */
export function x402Event(tid: string, record: X402SettlementRecord, x402Network: string, outcome: { txHash?: string | null; errorReason?: string | null }): NewWebhookEvent {
  const common = {
    tid, network: x402Network, payer: record.payer, pay_to: record.payTo, asset: record.asset, amount: record.amount, nonce: record.nonce,
  };
  if (outcome.errorReason) {
    return { type: 'x402.failed', tid, data: { ...common, error_reason: outcome.errorReason, transaction: outcome.txHash ?? '' } };
  }
  return { type: 'x402.settled', tid, data: { ...common, transaction: outcome.txHash ?? '', res_code: '00', res_message: 'Success' } };
}
