import { DomainError } from '#shared/errors.ts';
import type { CommerceDeps } from './commerce-deps.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import { normalizeDecimal } from './exchange.ts';
import { formatDate } from './platform-dates.ts';

export interface RateNotice {
  currency: string;
  /** Currency units per token, e.g. "1350.5" KRW for 1 VIXP. */
  rate: string;
  /** `yyyyMMdd` + 5-digit index of the day's notices for the currency, e.g. 2026112200003. */
  exchangeDateIndex: string;
  publishedAt: number;
}

export const currencyPattern = /^[A-Z]{3}$/;

export function exchangeDateIndexOf(noticeDate: string, noticeIndex: number): string {
  return `${noticeDate}${String(noticeIndex).padStart(5, '0')}`;
}

/** Publishes an exchange-rate notice; it is in force for its currency until the next one. */
export async function publishRateNotice(
  deps: Pick<CommerceDeps, 'clock' | 'timeZone'> & { merchants: Pick<MerchantRepository, 'insertRateNotice'> },
  params: { currency: string; rate: string },
): Promise<RateNotice> {
  if (!currencyPattern.test(params.currency)) throw new DomainError('request.invalid', 'currency must be an ISO 4217 code such as KRW', { details: 'currency' });
  const rate = normalizeDecimal(params.rate, 'rate');
  const now = deps.clock();
  const notice = await deps.merchants.insertRateNotice({ currency: params.currency, noticeDate: formatDate(now, deps.timeZone), rate, publishedAt: now });
  if (notice.noticeIndex > 99_999) throw new DomainError('request.invalid', 'no more than 99999 notices a day per currency', { details: 'currency' });
  return { currency: notice.currency, rate: notice.rate, exchangeDateIndex: exchangeDateIndexOf(notice.noticeDate, notice.noticeIndex), publishedAt: now };
}
