import type { PaymentDeps } from '../payments/payment-deps.ts';
import type { PosSide } from '../payments/run-payment.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
import { createRewardRepository } from '../store/reward-repository.ts';
import type { Db } from '../store/db.ts';
import type { RewardDeps } from './reward-deps.ts';
import { issueReward, type IssueRewardRequest } from './issue-reward.ts';
import { claimReward, claimRewardAtPos, type ClaimAtPosRequest, type ClaimRewardParameters } from './claim-reward.ts';
import { cancelReward, type CancelRewardRequest } from './cancel-reward.ts';

/** Reward operations with their dependencies bound. */
export function createRewardService(deps: RewardDeps) {
  return {
    issueReward: (store: StoreRecord, request: IssueRewardRequest) => issueReward(deps, store, request),
    claimAtPos: (store: StoreRecord, request: ClaimAtPosRequest, pos: PosSide) => claimRewardAtPos(deps, store, request, pos),
    claimFromReceipt: (params: ClaimRewardParameters) => claimReward(deps, params),
    cancelReward: (store: StoreRecord, request: CancelRewardRequest) => cancelReward(deps, store, request),
  };
}

export type RewardService = ReturnType<typeof createRewardService>;

/** Reward dependencies over the payment ones (sharing their pairing desk). */
export function rewardDepsOf(payments: PaymentDeps, db: Db, rewardLifetimeDays: number): RewardDeps {
  return { ...payments, rewards: createRewardRepository(db), rewardLifetimeMs: rewardLifetimeDays * 24 * 3600 * 1000 };
}
