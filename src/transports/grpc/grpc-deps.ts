import type { PaymentService } from '../../payments/payment-service.ts';
import type { RewardService } from '../../rewards/reward-service.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
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
  /**
   * The open StartPayment/DoPayment streams, when the server tracks them for its shutdown: once the
   * shutdown grace is over, each one still open is answered in its terminal state with 10.
   */
  openStreams?: Set<OpenStream>;
}

/** An open payment stream as the shutdown sees it. */
export interface OpenStream {
  /** Answers the stream's latest request in its terminal state with 10 (Internal server error) and ends it. */
  shutDown(): void;
}
