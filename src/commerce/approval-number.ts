import type { MerchantRepository } from '../store/merchant-repository.ts';
import type { Clock } from '#shared/clock.ts';
import { formatDateTime } from './platform-dates.ts';

export interface ApprovalNumber {
  /** `yyyyMMdd` + an 8-digit daily sequence, e.g. 2026112200000042. */
  number: string;
  /** `yyyyMMddHHmmss` in the platform's time zone. */
  date: string;
}

/**
 * The next approval (or cancellation) number and its date. Approvals, payment cancellations and
 * reward cancellations share one daily sequence, so no two of them ever carry the same number.
 */
export async function nextApprovalNumber(deps: { merchants: Pick<MerchantRepository, 'nextNumber'>; clock: Clock; timeZone: string }): Promise<ApprovalNumber> {
  const date = formatDateTime(deps.clock(), deps.timeZone);
  const day = date.slice(0, 8);
  const sequence = await deps.merchants.nextNumber(`approval:${day}`);
  return { number: `${day}${String(sequence).padStart(8, '0')}`, date };
}
