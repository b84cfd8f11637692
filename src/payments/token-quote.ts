import { formatTokenAmount } from '../shared/amount.ts';
import { DomainError } from '../shared/errors.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { normalizeDecimal, tokenUnitsFor } from './exchange.ts';
import { currencyPattern, exchangeDateIndexOf } from './publish-rate-notice.ts';

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
 * Converts a currency amount to tokens at the rate notice in force:
 * token_amount = exchange_amount / exchange_rate, rounded down to the token's smallest unit.
 */
export async function quoteTokens(
  deps: Pick<PaymentDeps, 'merchants' | 'wallet' | 'network' | 'defaultCurrency'>,
  params: { exchangeAmount: string; exchangeCurrency?: string; contractAddress?: string; tokenSymbol?: string },
): Promise<TokenQuote> {
  const exchangeCurrency = params.exchangeCurrency || deps.defaultCurrency;
  if (!currencyPattern.test(exchangeCurrency)) throw new DomainError('request.invalid', 'exchange_currency must be an ISO 4217 code', { details: 'exchange_currency' });
  const exchangeAmount = normalizeDecimal(params.exchangeAmount, 'exchange_amount');
  const token = await deps.wallet.getTokenInfo(deps.network, {
    ...(params.contractAddress && { contractAddress: params.contractAddress }),
    ...(params.tokenSymbol && !params.contractAddress && { tokenSymbol: params.tokenSymbol }),
  });
  if (params.tokenSymbol && params.tokenSymbol !== token.tokenSymbol) {
    throw new DomainError('request.invalid', 'token_symbol does not match contract_address', { details: 'token_symbol' });
  }
  const notice = await deps.merchants.latestRateNotice(exchangeCurrency);
  if (!notice) throw new DomainError('payment.no_rate_notice', `no exchange-rate notice has been published for ${exchangeCurrency}`);
  const tokenUnits = tokenUnitsFor(exchangeAmount, notice.rate, token.decimals);
  return {
    contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, decimals: token.decimals,
    tokenUnits, tokenAmount: formatTokenAmount(tokenUnits, token.decimals),
    exchangeAmount, exchangeCurrency, exchangeRate: notice.rate, exchangeDateIndex: exchangeDateIndexOf(notice.noticeDate, notice.noticeIndex),
  };
}
