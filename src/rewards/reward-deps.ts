import type { PaymentDeps } from '../payments/payment-deps.ts';
import type { RewardRepository } from '../store/reward-repository.ts';

/** Rewards stand on the payment dependencies (stores, rates, wallet, pairing) plus their own. */
export interface RewardDeps extends PaymentDeps {
  rewards: RewardRepository;
  rewardLifetimeMs: number;
}
