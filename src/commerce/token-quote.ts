import { formatTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { CommerceDeps } from './commerce-deps.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import { normalizeDecimal, tokenUnitsFor } from './exchange.ts';
import { currencyPattern, exchangeDateIndexOf, noticeSubject, noticeTokenOf } from './rate-notice.ts';
import { resolveSettlementToken, type SettlementTokenDeps } from './settlement-token.ts';

export interface TokenQuote {
  contractAddress: string;
  tokenSymbol: string;
  decimals: number;
  tokenUnits: bigint;
  /** Decimal string of tokenUnits. */
  tokenAmount: string;
  exchangeAmount: string;
  exchangeCurrency: string;
  exchangeRate: string;
  exchangeDateIndex: string;
}

/**
 * Converts a currency amount to tokens at the rate notice in force for the currency and that token:
 * token_amount = exchange_amount / exchange_rate, rounded down to the token's smallest unit (its own
 * decimals). The token is a settlement token (resolveSettlementToken): VIXP unless another accepted
 * one is named; a token without a notice for the currency is `payment.no_rate_notice`, whatever
 * other tokens' notices say.
 */
export async function quoteTokens(
  deps: SettlementTokenDeps & Pick<CommerceDeps, 'network' | 'defaultCurrency'> & { merchants: Pick<MerchantRepository, 'latestRateNotice'> },
  params: { exchangeAmount: string; exchangeCurrency?: string; contractAddress?: string; tokenSymbol?: string },
): Promise<TokenQuote> {
  const exchangeCurrency = params.exchangeCurrency || deps.defaultCurrency;
  if (!currencyPattern.test(exchangeCurrency)) throw new DomainError('request.invalid', 'exchange_currency must be an ISO 4217 code', { details: 'exchange_currency' });
  const exchangeAmount = normalizeDecimal(params.exchangeAmount, 'exchange_amount');
  // Only VIXP or an allowed token: never one a user made, whatever the QR code names.
  const token = await resolveSettlementToken(deps, deps.network, params);
  const noticeToken = noticeTokenOf(deps.network, token, await deps.wallet.getTokenInfo(deps.network, {}));
  const notice = await deps.merchants.latestRateNotice(exchangeCurrency, noticeToken);
  if (!notice) {
    throw new DomainError('payment.no_rate_notice', `no exchange-rate notice has been published ${noticeSubject(exchangeCurrency, noticeToken, token.tokenSymbol)}`);
  }
  const tokenUnits = tokenUnitsFor(exchangeAmount, notice.rate, token.decimals);
  return {
    contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, decimals: token.decimals,
    tokenUnits, tokenAmount: formatTokenAmount(tokenUnits, token.decimals),
    exchangeAmount, exchangeCurrency, exchangeRate: notice.rate, exchangeDateIndex: exchangeDateIndexOf(notice.noticeDate, notice.noticeIndex),
  };
}
