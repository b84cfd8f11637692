import type { Platform } from './platform.ts';
import { createPaymentService, paymentDepsOf, type PaymentService } from './payments/payment-service.ts';
import { createRewardService, rewardDepsOf, type RewardService } from './rewards/reward-service.ts';
import { startGrpcServer, type GrpcServer } from './transports/grpc/grpc-server.ts';

export interface PaymentServer extends GrpcServer {
  payments: PaymentService;
  rewards: RewardService;
}

/**
 * The payment server over a started platform: payment and reward services (sharing one pairing
 * desk), callers authenticated by the identity's JWTs (app) and store API keys (POS).
 */
export async function startPaymentServer(platform: Platform, options: { port?: number; host?: string } = {}): Promise<PaymentServer> {
  const { config } = platform;
  const paymentDeps = paymentDepsOf(platform);
  const payments = createPaymentService(paymentDeps);
  const rewards = createRewardService(rewardDepsOf(paymentDeps, platform.store.db, config.rewardLifetimeDays));
  const server = await startGrpcServer({
    payments,
    rewards,
    verifyAccessToken: (token) => platform.identity.jwt.verifyAccessToken(token),
    findUserWallet: async (userId) => {
      const user = await platform.identity.users.findUser(userId);
      return user?.walletAddress ? { address: user.walletAddress } : undefined;
    },
    clock: platform.clock,
    timeZone: config.timeZone,
    logger: platform.logger.child({ component: 'grpc' }),
  }, { host: options.host ?? config.grpcHost, port: options.port ?? config.grpcPort, maxMessageBytes: config.grpcMaxMessageBytes });
  return { ...server, payments, rewards };
}
