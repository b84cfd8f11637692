import type { CommerceDeps } from '../commerce/commerce-deps.ts';
import type { PairingDesk } from '../pairing/pairing-desk.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import type { RewardRepository } from '../store/reward-repository.ts';
import type { WalletService } from '../wallet/wallet-service.ts';

/**
 * What reward operations use: their repository, the rate notices and approval numbers, the
 * settlement-token list, three wallet calls and the pairing desk's two app-side calls (a claim at
 * the POS pairs like a payment). Nothing of the payments domain.
 */
export interface RewardDeps extends CommerceDeps {
  rewards: RewardRepository;
  merchants: Pick<MerchantRepository, 'latestRateNotice' | 'nextNumber'>;
  wallet: Pick<WalletService, 'getTokenInfo' | 'getBalance' | 'transferFromCustody' | 'attemptTransferOutcome'>;
  desk: Pick<PairingDesk, 'takeApp' | 'failWaitingApp'>;
  rewardLifetimeMs: number;
}
