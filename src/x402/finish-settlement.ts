import type { NetworkName } from '#shared/networks.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { x402Event } from './x402-events.ts';
import { x402NetworkOf } from './x402-networks.ts';

/**
 * Records how an accepted settlement ended, with its webhook event (when its key belongs to a store)
 * in the same transaction; counted once, by whichever caller ended it first.
 */
export async function finishSettlement(
  deps: Pick<X402Deps, 'settlements' | 'keys' | 'chains' | 'clock' | 'onOutcome'>,
  record: X402SettlementRecord,
  outcome: { status: 'settled'; txHash: string } | { status: 'failed'; errorReason: string; txHash?: string | null },
): Promise<void> {
  const network = record.network as NetworkName;
  const key = await deps.keys.find(record.keyId);
  const event = key?.tid ? x402Event(key.tid, record, x402NetworkOf(deps.chains, network), outcome) : undefined;
  if (await deps.settlements.finish(record.nonce, outcome, deps.clock(), event)) deps.onOutcome?.(network, outcome.status);
}
