import { randomBytes } from 'node:crypto';
import { formatTokenAmount } from '../shared/amount.ts';
import { DomainError } from '../shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { RewardRecord } from '../store/reward-repository.ts';
import { formatDateTime } from '../payments/platform-dates.ts';
import { quoteTokens } from '../payments/token-quote.ts';
import { normalizeDecimal } from '../payments/exchange.ts';
import type { RewardDeps } from './reward-deps.ts';

export interface IssueRewardRequest {
  tid: string;
  rewardReason: string;
  /** The reward's value in currency; converted at the rate notice in force. */
  exchangeAmount: string;
  exchangeCurrency?: string;
}

/** IssueReward's response fields. */
export interface IssuedReward {
  rewardId: string;
  rewardDate: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAmount: string;
  exchangeDateIndex: string;
  exchangeRate: string;
  exchangeAmount: string;
}

/**
 * Creates a reward funded by the store's settlement account (tokens move when it is claimed). The
 * same tid and reward_reason never makes a second reward: repeating the same request answers the
 * original reward; the same reason with another amount is `reward.already_rewarded`.
 */
export async function issueReward(deps: RewardDeps, store: StoreRecord, request: IssueRewardRequest): Promise<IssuedReward> {
  if (request.tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  const reason = request.rewardReason?.trim() ?? '';
  if (reason.length === 0 || reason.length > 256) throw new DomainError('request.invalid', 'reward_reason is required (at most 256 characters)', { details: 'reward_reason' });
  let exchangeAmount: string;
  try {
    exchangeAmount = normalizeDecimal(request.exchangeAmount, 'exchange_amount');
  } catch (cause) {
    throw new DomainError('reward.bad_amount', 'exchange_amount must be a positive decimal string', { cause });
  }
  const quote = await quoteTokens(deps, { exchangeAmount, ...(request.exchangeCurrency && { exchangeCurrency: request.exchangeCurrency }) });
  const funds = await deps.wallet.getBalance(deps.network, { address: store.settlementAddress, contractAddress: quote.contractAddress });
  if (BigInt(funds.balanceRaw) < quote.tokenUnits) throw new DomainError('wallet.insufficient_balance', 'the store\'s account cannot fund this reward');
  const now = deps.clock();
  const { inserted, reward } = await deps.rewards.insertReward({
    id: randomBytes(12).toString('hex').toUpperCase(), tid: store.tid, reward_reason: reason, network: deps.network,
    settlement_address: store.settlementAddress, contract_address: quote.contractAddress, token_symbol: quote.tokenSymbol,
    token_amount: quote.tokenUnits.toString(), exchange_amount: exchangeAmount, exchange_currency: quote.exchangeCurrency,
    exchange_rate: quote.exchangeRate, exchange_date_index: quote.exchangeDateIndex, reward_date: formatDateTime(now, deps.timeZone),
    expires_at: now + deps.rewardLifetimeMs, created_at: now, updated_at: now,
  });
  if (!inserted && (reward.exchange_amount !== exchangeAmount || reward.exchange_currency !== quote.exchangeCurrency)) {
    throw new DomainError('reward.already_rewarded', 'this store already issued a reward for this reward_reason');
  }
  return issuedRewardOf(reward, quote.decimals);
}

export function issuedRewardOf(reward: RewardRecord, decimals: number): IssuedReward {
  return {
    rewardId: reward.id, rewardDate: reward.reward_date, contractAddress: reward.contract_address, tokenSymbol: reward.token_symbol,
    tokenAmount: formatTokenAmount(BigInt(reward.token_amount), decimals), exchangeDateIndex: reward.exchange_date_index,
    exchangeRate: reward.exchange_rate, exchangeAmount: reward.exchange_amount,
  };
}
