import { formatTokenAmount } from '#shared/amount.ts';
import type { RewardRecord } from '../store/reward-repository.ts';
import type { RewardClaim } from '../pairing/session-events.ts';
import { nextApprovalNumber } from '../commerce/approval-number.ts';
import type { StaleAttempt } from '../commerce/once-per-tran-no.ts';
import { rewardCanceledEvent, rewardClaimedEvent } from '../webhooks/webhook-events.ts';
import type { RewardDeps } from './reward-deps.ts';
import type { TransferAttempt } from '../wallet/operation-transfer.ts';

/** A reward claim signs a new transfer per attempt: `reward:<id>:<attempt>`. */
export const claimTransferPrefix = (rewardId: string) => `reward:${rewardId}:`;
/** A reward cancellation likewise: `reward-cancel:<id>:<attempt>`. */
export const cancelTransferPrefix = (rewardId: string) => `reward-cancel:${rewardId}:`;

/**
 * An attempt is named by the time its run set the reward claiming or canceling (the reward's
 * `updatedAt` from then until it ends): the sweep can then name, and void, the transfer of an attempt
 * that signed none yet, so that a run slower than the staleness window cannot sign it after the
 * sweep put the reward back (operation-transfer.ts).
 */
export const transferAttempt = (prefix: string, since: number): TransferAttempt => ({ prefix, reference: `${prefix}${since}` });

type Token = { contractAddress: string; tokenSymbol: string; decimals: number };

/** A claim's answer (END_REWARD, the app's claim reply, the reward.claimed webhook). */
export function claimOf(reward: RewardRecord, token: Token, userAddress: string, transferTransactionId: string): RewardClaim {
  return {
    rewardId: reward.id, contractAddress: reward.contractAddress, tokenSymbol: reward.tokenSymbol, userAddress,
    tokenAmount: formatTokenAmount(BigInt(reward.tokenAmount), token.decimals), transferTransactionId,
    exchangeDateIndex: reward.exchangeDateIndex, exchangeRate: reward.exchangeRate, exchangeAmount: reward.exchangeAmount, exchangeCurrency: reward.exchangeCurrency,
  };
}

/** CancelReward's response fields. transferTransactionId is empty when nothing had to move back. */
export interface RewardCancellation {
  contractAddress: string;
  tokenSymbol: string;
  userAddress: string;
  tokenAmount: string;
  transferTransactionId: string;
  approvalNo: string;
  approvalDate: string;
}

/** A cancellation's answer from the reward as recorded canceled. */
export function cancellationOf(reward: RewardRecord, token: Token): RewardCancellation {
  // Stryker disable next-line StringLiteral: unreachable (a canceled reward has its number and date, and one moved back its user; the defaults only satisfy the types)
  const [userAddress, approvalNo, approvalDate] = [reward.userAddress ?? '', reward.cancelNo ?? '', reward.cancelDate ?? ''];
  return {
    contractAddress: reward.contractAddress, tokenSymbol: reward.tokenSymbol, userAddress: reward.cancelTransactionId ? userAddress : '',
    tokenAmount: formatTokenAmount(BigInt(reward.tokenAmount), token.decimals), transferTransactionId: reward.cancelTransactionId ?? '',
    approvalNo, approvalDate,
  };
}

const isStale = (deps: Pick<RewardDeps, 'clock' | 'staleOperationMs'>, reward: RewardRecord) => deps.clock() - reward.updatedAt > deps.staleOperationMs;
const tokenOf = (deps: RewardDeps, reward: RewardRecord) => deps.wallet.getTokenInfo(deps.network, { contractAddress: reward.contractAddress });

/**
 * A reward left `claiming` or `canceling` by a run interrupted mid-way (its instance stopped), once
 * stale, ends as the chain says its latest transfer ended: a payout used makes it claimed; one never
 * signed, cancelled or expired puts it back to issued (claimable again). A give-back used makes it
 * canceled (numbered now); otherwise it is claimed again. A transfer still able to execute leaves it
 * as it is. Answers the reward as it stands after.
 */
export async function settleStaleReward(deps: RewardDeps, reward: RewardRecord): Promise<RewardRecord> {
  if (!isStale(deps, reward) || (reward.status !== 'claiming' && reward.status !== 'canceling')) return reward;
  const claiming = reward.status === 'claiming';
  const transfer = await deps.wallet.attemptTransferOutcome(deps.network, transferAttempt(claiming ? claimTransferPrefix(reward.id) : cancelTransferPrefix(reward.id), reward.updatedAt));
  if (transfer.status === 'open') return reward;
  const now = deps.clock();
  if (transfer.status !== 'used') {
    await deps.rewards.transition(reward.id, reward.status, claiming ? 'issued' : 'claimed', claiming ? { userAddress: null } : {}, now);
  } else if (claiming) {
    // Stryker disable next-line StringLiteral: unreachable (a claiming reward has the userAddress its claim set; the default only satisfies the type)
    const claim = claimOf(reward, await tokenOf(deps, reward), reward.userAddress ?? '', transfer.txHash);
    await deps.rewards.transition(reward.id, 'claiming', 'claimed', { claimTransactionId: transfer.txHash, claimedAt: now }, now, rewardClaimedEvent(reward.tid, claim));
  } else {
    const number = await nextApprovalNumber(deps);
    const canceled = { ...reward, cancelNo: number.number, cancelDate: number.date, cancelTransactionId: transfer.txHash };
    await deps.rewards.transition(reward.id, 'canceling', 'canceled', { cancelNo: number.number, cancelDate: number.date, cancelTransactionId: transfer.txHash }, now,
      rewardCanceledEvent(reward.tid, reward.id, cancellationOf(canceled, await tokenOf(deps, reward))));
  }
  deps.logger.warn({ rewardId: reward.id, tid: reward.tid, was: reward.status, transfer: transfer.status }, 'interrupted reward operation settled from its transfer');
  return (await deps.rewards.findReward(reward.id)) ?? reward;
}

/**
 * A CancelReward retried under the tran_no of an interrupted run (`rewardId` its reference): the
 * reward canceled answers its cancellation; claimed, issued or claiming again runs the call (which
 * moves it back, voids it or answers 13); still canceling with a transfer that may execute: pending.
 */
export async function settleStaleRewardCancel(deps: RewardDeps, rewardId: string): Promise<StaleAttempt<RewardCancellation>> {
  const found = await deps.rewards.findReward(rewardId);
  if (!found) return 'rerun';
  const reward = await settleStaleReward(deps, found);
  if (reward.status === 'canceling') return 'pending';
  if (reward.status === 'canceled') return { outcome: cancellationOf(reward, await tokenOf(deps, reward)) };
  return 'rerun';
}

/** Settles every reward left claiming or canceling by an interrupted run (the periodic sweep); answers how many ended. */
export async function settleStaleRewards(deps: RewardDeps): Promise<number> {
  let ended = 0;
  // Stryker disable next-line ArithmeticOperator: equivalent (listStale's bound only narrows the list: settleStaleReward leaves a reward inside the stale window as it is)
  for (const reward of await deps.rewards.listStale(deps.clock() - deps.staleOperationMs)) {
    if ((await settleStaleReward(deps, reward)).status !== reward.status) ended++;
  }
  return ended;
}
