import { getAddress, isAddress } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { CommerceDeps } from './commerce-deps.ts';
import { platformTokenNotice, type MerchantRepository, type RateNoticeToken } from '../store/merchant-repository.ts';
import type { SettlementTokenDeps, NamedToken, SettlementToken } from './settlement-token.ts';
import { normalizeDecimal } from './exchange.ts';
import { formatDate } from './platform-dates.ts';

export interface RateNotice {
  currency: string;
  /** Currency units per token, e.g. "1350.5" KRW for 1 VIXP, "1380.25" KRW for 1 USDC. */
  rate: string;
  /** `yyyyMMdd` + 5-digit index of the day's notices for the currency, e.g. 2026112200003. */
  exchangeDateIndex: string;
  publishedAt: number;
  /** The token the notice prices (VIXP unless another was named). */
  contractAddress: string;
  tokenSymbol: string;
}

export const currencyPattern = /^[A-Z]{3}$/;

export function exchangeDateIndexOf(noticeDate: string, noticeIndex: number): string {
  return `${noticeDate}${String(noticeIndex).padStart(5, '0')}`;
}

/** The key a token's notices are stored under: the platform token (VIXP) of any network, or the allowed token itself. */
export function noticeTokenOf(network: NetworkName, token: Pick<SettlementToken, 'contractAddress'>, platform: Pick<SettlementToken, 'contractAddress'>): RateNoticeToken {
  return token.contractAddress === platform.contractAddress ? platformTokenNotice : { network, contractAddress: token.contractAddress };
}

/** "for KRW" (VIXP, as before per-token notices) or "for KRW in USDC (0x…)". */
export function noticeSubject(currency: string, token: RateNoticeToken, tokenSymbol: string): string {
  return 'platformToken' in token ? `for ${currency}` : `for ${currency} in ${tokenSymbol} (${token.contractAddress})`;
}

const notListed = (what: string, network: NetworkName) =>
  new DomainError('payment.token_not_accepted', `${what} is not a token of ${network}'s allow-list: a rate notice prices VIXP or a token the operator allowed (vixpay token allow)`);

/**
 * The token a notice is published for, named as a POS names it (contract_address, token_symbol): VIXP
 * when nothing is named, else a token on the operator allow-list, whatever its transfer path.
 */
async function tokenToPrice(deps: SettlementTokenDeps, network: NetworkName, named: NamedToken): Promise<{ token: SettlementToken; key: RateNoticeToken }> {
  const platform = await deps.wallet.getTokenInfo(network, {});
  let token: SettlementToken = { contractAddress: platform.contractAddress, tokenSymbol: platform.tokenSymbol, decimals: platform.decimals };
  if (named.contractAddress) {
    if (!isAddress(named.contractAddress)) throw new DomainError('request.invalid', 'contract_address is not a valid address', { details: 'contract_address' });
    const contractAddress = getAddress(named.contractAddress);
    if (contractAddress !== platform.contractAddress) {
      const listed = await deps.settlementTokens.find(network, contractAddress);
      if (!listed) throw notListed(`token ${contractAddress}`, network);
      token = { contractAddress, tokenSymbol: listed.symbol, decimals: listed.decimals };
    }
  } else if (named.tokenSymbol && named.tokenSymbol !== platform.tokenSymbol) {
    const bySymbol = await deps.settlementTokens.findBySymbol(network, named.tokenSymbol);
    if (bySymbol.length !== 1) throw notListed(`token_symbol ${JSON.stringify(named.tokenSymbol.slice(0, 16))} without contract_address`, network);
    const listed = bySymbol[0]!;
    token = { contractAddress: listed.contractAddress, tokenSymbol: listed.symbol, decimals: listed.decimals };
  }
  if (named.tokenSymbol && named.tokenSymbol !== token.tokenSymbol) {
    throw new DomainError('request.invalid', 'token_symbol does not match contract_address', { details: 'token_symbol' });
  }
  return { token, key: noticeTokenOf(network, token, platform) };
}

/**
 * Publishes an exchange-rate notice: currency units per token, in force for its (currency, token)
 * until the next one. The token is VIXP unless `contractAddress` or `tokenSymbol` names an allowed one.
 */
export async function publishRateNotice(
  deps: Pick<CommerceDeps, 'clock' | 'timeZone' | 'network'> & SettlementTokenDeps & { merchants: Pick<MerchantRepository, 'insertRateNotice'> },
  params: { currency: string; rate: string } & NamedToken,
): Promise<RateNotice> {
  if (!currencyPattern.test(params.currency)) throw new DomainError('request.invalid', 'currency must be an ISO 4217 code such as KRW', { details: 'currency' });
  const rate = normalizeDecimal(params.rate, 'rate');
  const { token, key } = await tokenToPrice(deps, deps.network, params);
  const now = deps.clock();
  const notice = await deps.merchants.insertRateNotice({ currency: params.currency, token: key, noticeDate: formatDate(now, deps.timeZone), rate, publishedAt: now });
  if (notice.noticeIndex > 99_999) throw new DomainError('request.invalid', 'no more than 99999 notices a day per currency', { details: 'currency' });
  return {
    currency: notice.currency, rate: notice.rate, exchangeDateIndex: exchangeDateIndexOf(notice.noticeDate, notice.noticeIndex), publishedAt: now,
    contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol,
  };
}
