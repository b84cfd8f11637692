import type { PosSide } from '../pairing/session-events.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';
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
