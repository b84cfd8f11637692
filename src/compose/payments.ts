/**
 * The payment and reward services over a pairing desk: Redis (`redis: true`, REDIS_URL) so that
 * instances pair each other's streams, or in-process. A second instance on the same platform (a
 * test of two instances) composes a second part. Also the dependencies of the operator's store
 * commands (a store added, a rate notice published, a token allowed).
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import { noFaults, type Faults } from '#shared/failpoints.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Store } from '../store/db.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import { createPaymentRepository } from '../store/payment-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { createRewardRepository } from '../store/reward-repository.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import type { PairingDesk } from '../pairing/pairing-desk.ts';
import { createPairingDesk } from '../pairing/in-process-pairing-desk.ts';
import { createRedisPairingDesk } from '../pairing/redis-pairing-desk.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import { createPaymentService, type PaymentService } from '../payments/payment-service.ts';
import type { PaymentDeps } from '../payments/payment-deps.ts';
import { settleStaleCancellations } from '../payments/cancel-payment.ts';
import { settleStalePayments } from '../payments/settle-stale-payment.ts';
import type { SettlementTokenAllowListDeps } from '../payments/settlement-token-allow-list.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import { inspectToken } from '../chain/token-inspection.ts';
import { createRewardService, type RewardService } from '../rewards/reward-service.ts';
import type { RewardDeps } from '../rewards/reward-deps.ts';
import { settleStaleRewards } from '../rewards/settle-stale-reward.ts';

/** The payment and reward services over one pairing desk (a payment server instance's share). */
export interface PaymentPart {
  payments: PaymentService;
  rewards: RewardService;
  /** The desk they pair on: what an operator (or a test) inspects. */
  desk: PairingDesk;
}

/** What the operator's store commands work with (`store add`, `rate publish`, `token allow`). */
export interface StoreAdmin {
  stores: Pick<PaymentDeps, 'merchants' | 'wallet' | 'clock' | 'timeZone' | 'network' | 'settlementTokens'>;
  settlementTokens: SettlementTokenAllowListDeps;
}

export function composeStoreAdmin(config: Config, core: { store: Store; wallet: WalletService; clock: Clock; chains: ChainClients }): StoreAdmin {
  return {
    stores: {
      merchants: createMerchantRepository(core.store.db), wallet: core.wallet, clock: core.clock, timeZone: config.timeZone,
      network: config.paymentNetwork, settlementTokens: createSettlementTokenRepository(core.store.db),
    },
    settlementTokens: {
      wallet: core.wallet, settlementTokens: createSettlementTokenRepository(core.store.db), clock: core.clock,
      inspect: (network, contract, options) => inspectToken(core.chains[network].client, contract, options),
    },
  };
}

export async function composePayments(
  core: { config: Config; logger: Logger; clock: Clock; store: Store; wallet: WalletService; faults?: Faults },
  options: { redis: boolean; redisKeyPrefix?: string | undefined },
): Promise<PaymentPart & { close(): Promise<void> }> {
  const { config } = core;
  const faults = core.faults ?? noFaults;
  const idleTimeoutMs = config.paymentIdleTimeoutMs;
  const redisDesk = options.redis && config.redisUrl
    ? await createRedisPairingDesk({
      url: config.redisUrl, appWaitMs: idleTimeoutMs,
      ...(options.redisKeyPrefix && { keyPrefix: options.redisKeyPrefix }),
      logger: core.logger.child({ component: 'pairing' }),
    })
    : undefined;
  const desk = redisDesk ?? createPairingDesk({ appWaitMs: idleTimeoutMs });
  const deps: PaymentDeps = {
    merchants: createMerchantRepository(core.store.db),
    payments: createPaymentRepository(core.store.db),
    settlementTokens: createSettlementTokenRepository(core.store.db),
    wallet: core.wallet,
    desk,
    idempotency: createIdempotencyRepository(core.store.db),
    clock: core.clock,
    logger: core.logger.child({ component: 'payments' }),
    network: config.paymentNetwork,
    timeZone: config.timeZone,
    defaultCurrency: config.defaultCurrency,
    pairingWindowMs: config.paymentPairingWindowMs,
    idleTimeoutMs,
    staleOperationMs: config.staleOperationMs,
    faults,
  };
  const rewardDeps: RewardDeps = {
    rewards: createRewardRepository(core.store.db), merchants: deps.merchants, settlementTokens: deps.settlementTokens, idempotency: deps.idempotency,
    wallet: core.wallet, desk, clock: deps.clock, logger: deps.logger, network: deps.network, timeZone: deps.timeZone,
    defaultCurrency: deps.defaultCurrency, pairingWindowMs: deps.pairingWindowMs, rewardLifetimeMs: config.rewardLifetimeMs,
    staleOperationMs: deps.staleOperationMs, faults,
  };
  // Payments, refunds, reward claims and reward cancellations an instance left mid-run end as the
  // chain says, whether or not the POS retries them.
  const staleSweep = runPeriodically(() => settleStalePayments(deps).then(() => settleStaleCancellations(deps)).then(() => settleStaleRewards(rewardDeps))
    .catch((err: unknown) => core.logger.warn({ err }, 'sweep of interrupted operations failed')), config.sweepIntervalMs);
  return {
    payments: createPaymentService(deps), rewards: createRewardService(rewardDeps), desk,
    close: async () => { await staleSweep.stop(); await redisDesk?.close(); },
  };
}
