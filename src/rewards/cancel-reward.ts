import { formatTokenAmount, parseTokenAmount } from '#shared/amount.ts';
import { DomainError } from '#shared/errors.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import { nextApprovalNumber } from '../commerce/approval-number.ts';
import { resolveSettlementToken } from '../commerce/settlement-token.ts';
import type { RewardDeps } from './reward-deps.ts';
import { oncePerTranNo } from '../commerce/once-per-tran-no.ts';
import { rewardCanceledEvent } from '../webhooks/webhook-events.ts';
import { findSettledReward } from './claim-reward.ts';
import { cancelTransferPrefix, settleStaleRewardCancel, transferAttempt, type RewardCancellation } from './settle-stale-reward.ts';

export interface CancelRewardRequest {
  rewardId: string;
  /** Must be the reward's amount when given. */
  tokenAmount?: string;
  /** The call's `common.tran_no`: when given, the cancellation runs once for it (see once-per-tran-no.ts). */
  tranNo?: string;
}

export type { RewardCancellation };

/**
 * Voids an unclaimed reward (nothing moves), or moves a claimed one back from the user's account to
 * the store's. A second cancellation is `reward.already_canceled`. A retry of one interrupted mid-run
 * answers it as its give-back ended on chain, or runs again if nothing moved.
 */
export async function cancelReward(deps: RewardDeps, store: StoreRecord, request: CancelRewardRequest): Promise<RewardCancellation> {
  const { tranNo, ...parameters } = request;
  return oncePerTranNo(deps, {
    tid: store.tid, call: 'cancelReward', tranNo, request: { ...parameters },
    reference: parameters.rewardId, settleStale: (rewardId) => settleStaleRewardCancel(deps, rewardId),
  }, () => cancelOnce(deps, store, parameters));
}

async function cancelOnce(deps: RewardDeps, store: StoreRecord, request: CancelRewardRequest): Promise<RewardCancellation> {
  const reward = request.rewardId ? await findSettledReward(deps, request.rewardId) : undefined;
  if (!reward || reward.tid !== store.tid) throw new DomainError('reward.not_issued', 'no such reward of this store');
  if (reward.status === 'canceled') throw new DomainError('reward.already_canceled', 'the reward was already canceled');
  if (reward.status === 'claiming' || reward.status === 'canceling') throw new DomainError('payment.in_progress', `the reward is being ${reward.status === 'claiming' ? 'claimed' : 'canceled'} right now`);
  // Only a settlement token moves back (a voided, unclaimed reward moves nothing, but is checked alike).
  const token = await resolveSettlementToken(deps, deps.network, { contractAddress: reward.contractAddress });
  if (request.tokenAmount) {
    let units: bigint;
    try {
      // Stryker disable next-line StringLiteral: equivalent (the field's name is only in parseTokenAmount's refusal, which becomes reward.bad_amount below)
      units = parseTokenAmount(request.tokenAmount, token.decimals, 'tokenAmount');
    } catch {
      throw new DomainError('reward.bad_amount', 'tokenAmount is not a token amount');
    }
    if (units !== BigInt(reward.tokenAmount)) throw new DomainError('reward.bad_amount', 'tokenAmount is not the reward\'s amount');
  }
  const tokenAmount = formatTokenAmount(BigInt(reward.tokenAmount), token.decimals);
  const number = await nextApprovalNumber(deps);
  const now = deps.clock();
  const done = { cancelNo: number.number, cancelDate: number.date };

  if (reward.status === 'issued') {
    const voided: RewardCancellation = { contractAddress: reward.contractAddress, tokenSymbol: reward.tokenSymbol, userAddress: '', tokenAmount, transferTransactionId: '', approvalNo: number.number, approvalDate: number.date };
    if (!(await deps.rewards.transition(reward.id, 'issued', 'canceled', done, now, rewardCanceledEvent(reward.tid, reward.id, voided)))) return cancelOnce(deps, store, request);
    return voided;
  }
  if (!(await deps.rewards.transition(reward.id, 'claimed', 'canceling', {}, now))) return cancelOnce(deps, store, request);
  deps.faults?.at('reward-cancel.after-canceling');
  // Stryker disable next-line StringLiteral: unreachable (a claimed reward has its userAddress; the default only satisfies the type)
  const userAddress = reward.userAddress ?? '';
  const giveBack = await deps.wallet.transferFromCustody(deps.network, {
    fromAddress: userAddress, toAddress: reward.settlementAddress, amount: tokenAmount,
    contractAddress: reward.contractAddress, reference: transferAttempt(cancelTransferPrefix(reward.id), now).reference,
  });
  if (giveBack.status !== 'settled') {
    if (giveBack.status === 'refused') await deps.rewards.transition(reward.id, 'canceling', 'claimed', {}, deps.clock());
    throw giveBack.error;
  }
  const { transactionId } = giveBack;
  deps.faults?.at('reward-cancel.after-transfer');
  const movedBack: RewardCancellation = { contractAddress: reward.contractAddress, tokenSymbol: reward.tokenSymbol, userAddress, tokenAmount, transferTransactionId: transactionId, approvalNo: number.number, approvalDate: number.date };
  await deps.rewards.transition(reward.id, 'canceling', 'canceled', { ...done, cancelTransactionId: transactionId }, deps.clock(), rewardCanceledEvent(reward.tid, reward.id, movedBack));
  return movedBack;
}
