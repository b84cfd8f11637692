import type { PaymentDeps } from '../payments/payment-deps.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import type { RewardRepository } from '../store/reward-repository.ts';
import type { WalletService } from '../wallet/wallet-service.ts';

/**
 * What reward operations use: their repository, the rate notices and approval numbers, the
 * settlement-token list, three wallet calls and the pairing desk's two app-side calls (a claim at
 * the POS pairs like a payment). Nothing else of the payments domain.
 */
export interface RewardDeps extends Pick<PaymentDeps, 'settlementTokens' | 'idempotency' | 'clock' | 'logger' | 'network' | 'timeZone' | 'defaultCurrency' | 'pairingWindowMs' | 'staleOperationMs' | 'faults'> {
  rewards: RewardRepository;
  merchants: Pick<MerchantRepository, 'latestRateNotice' | 'nextNumber'>;
  wallet: Pick<WalletService, 'getTokenInfo' | 'getBalance' | 'transferFromCustody' | 'latestTransferOutcome'>;
  desk: Pick<PaymentDeps['desk'], 'takeApp' | 'failWaitingApp'>;
  rewardLifetimeMs: number;
}
