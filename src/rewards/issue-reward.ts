import { randomBytes } from 'node:crypto';
import { formatTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import type { RewardRecord } from '../store/reward-repository.ts';
import { formatDateTime } from '../commerce/platform-dates.ts';
import { quoteTokens } from '../commerce/token-quote.ts';
import { normalizeDecimal } from '../commerce/exchange.ts';
import type { RewardDeps } from './reward-deps.ts';
import { oncePerTranNo } from '../commerce/once-per-tran-no.ts';
import { rewardIssuedEvent } from '../webhooks/webhook-events.ts';

export interface IssueRewardRequest {
  tid: string;
  rewardReason: string;
  /** The reward's value in currency; converted at the rate notice in force. */
  exchangeAmount: string;
  exchangeCurrency?: string;
  /** The token to reward in (VIXP when neither is given): an accepted one, priced by its own rate notice. */
  contractAddress?: string;
  tokenSymbol?: string;
  /** The call's `common.tran_no`: when given, one reward per tran_no (see once-per-tran-no.ts). */
  tranNo?: string;
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
 * same tid and rewardReason never makes a second reward: repeating the same request answers the
 * original reward; the same reason with another amount is `reward.already_rewarded`.
 */
export async function issueReward(deps: RewardDeps, store: StoreRecord, request: IssueRewardRequest): Promise<IssuedReward> {
  const { tranNo, ...parameters } = request;
  // Moves nothing (tokens move at claim): one interrupted by a stopped instance may run again.
  return oncePerTranNo(deps, { tid: store.tid, call: 'issueReward', tranNo, request: { ...parameters }, rerunWhenStale: true },
    () => issueOnce(deps, store, parameters));
}

async function issueOnce(deps: RewardDeps, store: StoreRecord, request: IssueRewardRequest): Promise<IssuedReward> {
  if (request.tid !== store.tid) throw new DomainError('request.unauthorized', 'tid is not the store of this API key', { details: 'tid' });
  const reason = request.rewardReason?.trim() ?? '';
  if (reason.length === 0 || reason.length > 256) throw new DomainError('request.invalid', 'rewardReason is required (at most 256 characters)', { details: 'rewardReason' });
  let exchangeAmount: string;
  try {
    exchangeAmount = normalizeDecimal(request.exchangeAmount, 'exchangeAmount');
  } catch (cause) {
    throw new DomainError('reward.bad_amount', 'exchangeAmount must be a positive decimal string', { cause });
  }
  const quote = await quoteTokens(deps, {
    exchangeAmount,
    ...(request.exchangeCurrency && { exchangeCurrency: request.exchangeCurrency }),
    ...(request.contractAddress && { contractAddress: request.contractAddress }),
    ...(request.tokenSymbol && { tokenSymbol: request.tokenSymbol }),
  });
  const funds = await deps.wallet.getBalance(deps.network, { address: store.settlementAddress, contractAddress: quote.contractAddress });
  if (BigInt(funds.balanceRaw) < quote.tokenUnits) throw new DomainError('wallet.insufficient_balance', 'the store\'s account cannot fund this reward');
  const now = deps.clock();
  const fresh = {
    id: randomBytes(12).toString('hex').toUpperCase(), tid: store.tid, rewardReason: reason, network: deps.network,
    settlementAddress: store.settlementAddress, contractAddress: quote.contractAddress, tokenSymbol: quote.tokenSymbol,
    tokenAmount: quote.tokenUnits.toString(), exchangeAmount: exchangeAmount, exchangeCurrency: quote.exchangeCurrency,
    exchangeRate: quote.exchangeRate, exchangeDateIndex: quote.exchangeDateIndex, rewardDate: formatDateTime(now, deps.timeZone),
    expiresAt: now + deps.rewardLifetimeMs, createdAt: now, updatedAt: now,
  };
  const { inserted, reward } = await deps.rewards.insertReward(fresh, rewardIssuedEvent(store.tid, {
    ...issuedRewardOf({ ...fresh, status: 'issued', userAddress: null, claimTransactionId: null, claimedAt: null, cancelNo: null, cancelDate: null, cancelTransactionId: null }, quote.decimals),
    rewardReason: reason, exchangeCurrency: quote.exchangeCurrency,
  }));
  if (!inserted && (reward.exchangeAmount !== exchangeAmount || reward.exchangeCurrency !== quote.exchangeCurrency || reward.contractAddress !== quote.contractAddress)) {
    throw new DomainError('reward.already_rewarded', 'this store already issued a reward for this rewardReason');
  }
  return issuedRewardOf(reward, quote.decimals);
}

export function issuedRewardOf(reward: RewardRecord, decimals: number): IssuedReward {
  return {
    rewardId: reward.id, rewardDate: reward.rewardDate, contractAddress: reward.contractAddress, tokenSymbol: reward.tokenSymbol,
    tokenAmount: formatTokenAmount(BigInt(reward.tokenAmount), decimals), exchangeDateIndex: reward.exchangeDateIndex,
    exchangeRate: reward.exchangeRate, exchangeAmount: reward.exchangeAmount,
  };
}
