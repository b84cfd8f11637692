import type { PaymentService } from '../../payments/payment-service.ts';
import type { RewardService } from '../../rewards/reward-service.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import type { AccessTokenVerifier, FindUserWallet } from './caller-auth.ts';

/** What the gRPC transport needs: the domain services and how to authenticate callers. */
export interface GrpcDeps {
  payments: PaymentService;
  rewards: RewardService;
  verifyAccessToken: AccessTokenVerifier;
  findUserWallet: FindUserWallet;
  clock: Clock;
  timeZone: string;
  logger: Logger;
}
