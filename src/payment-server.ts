import type { Platform } from './platform.ts';
import { createPaymentService, paymentDepsOf, type PaymentService } from './payments/payment-service.ts';
import { createRewardService, rewardDepsOf, type RewardService } from './rewards/reward-service.ts';
import { createRedisPairingDesk } from './pairing/redis-pairing-desk.ts';
import { startGrpcServer, type GrpcServer } from './transports/grpc/grpc-server.ts';

export interface PaymentServer extends GrpcServer {
  payments: PaymentService;
  rewards: RewardService;
}

export interface PaymentServerOptions {
  port?: number;
  host?: string;
  /** Prefix of the Redis pairing desk's keys and channels (with `REDIS_URL`); default `vixpay:pairing`. */
  redisKeyPrefix?: string;
}

/**
 * The payment server over a started platform: payment and reward services (sharing one pairing
 * desk: in-process, or over Redis with `REDIS_URL` so that instances pair each other's streams),
 * callers authenticated by the identity's JWTs (app) and store API keys (POS).
 */
export async function startPaymentServer(platform: Platform, options: PaymentServerOptions = {}): Promise<PaymentServer> {
  const { config } = platform;
  const redisDesk = config.redisUrl
    ? await createRedisPairingDesk({
      url: config.redisUrl, appWaitMs: config.paymentIdleTimeoutSeconds * 1000,
      ...(options.redisKeyPrefix && { keyPrefix: options.redisKeyPrefix }),
      logger: platform.logger.child({ component: 'pairing' }),
    })
    : undefined;
  const paymentDeps = paymentDepsOf(platform, redisDesk);
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
  }, { host: options.host ?? config.grpcHost, port: options.port ?? config.grpcPort, maxMessageBytes: config.grpcMaxMessageBytes })
    .catch(async (error: unknown) => { await redisDesk?.close(); throw error; });
  return {
    ...server, payments, rewards,
    async stop(graceMs) {
      await server.stop(graceMs);
      await redisDesk?.close();
    },
  };
}
