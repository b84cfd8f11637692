import { errorSummary } from '#shared/redact.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { x402Event } from './x402-events.ts';
import { x402NetworkOf } from './x402-networks.ts';

/**
 * Records how an accepted settlement ended, with its webhook event (when its key belongs to a store)
 * in the same transaction; counted once, by whichever caller ended it first. A settled one then gets
 * its receipt (issueReceipt).
 */
export async function finishSettlement(
  deps: Pick<X402Deps, 'settlements' | 'keys' | 'chains' | 'clock' | 'onOutcome' | 'receipts' | 'logger'>,
  record: X402SettlementRecord,
  outcome: { status: 'settled'; txHash: string } | { status: 'failed'; errorReason: string; txHash?: string | null },
): Promise<void> {
  const network = record.network as NetworkName;
  const key = await deps.keys.find(record.keyId);
  const event = key?.tid ? x402Event(key.tid, record, x402NetworkOf(deps.chains, network), outcome) : undefined;
  if (await deps.settlements.finish(record.id, outcome, deps.clock(), event)) deps.onOutcome?.(network, outcome.status);
  if (outcome.status === 'settled') await issueReceipt(deps, record.id);
}

/**
 * Issues the receipt of a settled settlement unless it has one. Never fails the settlement: a
 * receipt that could not be issued now (the DID key store unavailable, a crash) is issued by the
 * sweep (facilitator.ts).
 */
export async function issueReceipt(deps: Pick<X402Deps, 'receipts' | 'logger'>, id: string): Promise<void> {
  try {
    await deps.receipts?.issue(id);
  } catch (error) {
    deps.logger.warn({ settlement: id, reason: errorSummary(error) }, 'x402 receipt not issued yet; the sweep issues it');
  }
}
