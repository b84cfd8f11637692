import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { finishSettlement } from './finish-settlement.ts';

/**
 * Records the outcome of an accepted settlement from its authorization, as the relayer (or its
 * recovery after a crash, or the expiry sweep) left it: used → settled with its transaction;
 * expired, cancelled or void → failed. Answers `resend` when nothing was journaled for it yet (never
 * reserved, or reserved and not sent): a caller not already carrying it sends it again.
 */
export async function observeSettlement(deps: X402Deps, record: X402SettlementRecord): Promise<'ended' | 'in-flight' | 'resend'> {
  if (record.status !== 'accepted') return 'ended';
  const authorization = await deps.authorizations.find(record.id);
  switch (authorization?.status) {
    case undefined: case 'reserved': return 'resend';
    case 'submitted': return 'in-flight';
    case 'used':
      await finishSettlement(deps, record, { status: 'settled', txHash: authorization.txHash ?? '' });
      return 'ended';
    case 'expired':
      await finishSettlement(deps, record, { status: 'failed', errorReason: 'invalid_exact_evm_payload_authorization_valid_before', txHash: authorization.txHash });
      return 'ended';
    default:
      await finishSettlement(deps, record, { status: 'failed', errorReason: 'invalid_transaction_state', txHash: authorization?.txHash ?? null });
      return 'ended';
  }
}
