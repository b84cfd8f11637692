import type { Platform } from '../platform.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import { createPaymentRepository } from '../store/payment-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import type { PaymentDeps } from './payment-deps.ts';
import { createPairingDesk } from '../pairing/in-process-pairing-desk.ts';
import type { AppArrival, PairingDesk } from '../pairing/pairing-desk.ts';
import { addStore } from './add-store.ts';
import { authenticateStore } from './authenticate-store.ts';
import { publishRateNotice } from './publish-rate-notice.ts';
import { quoteTokens } from './token-quote.ts';
import { runPayment, type PosSide, type StartPaymentRequest } from './run-payment.ts';
import { cancelPayment, type CancelPaymentRequest } from './cancel-payment.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';

/** Payment operations with their dependencies bound: what the gRPC transport and the CLI call. */
export function createPaymentService(deps: PaymentDeps) {
  return {
    deps,
    addStore: (params: { tid: string; name: string }) => addStore(deps, params),
    authenticateStore: (apiKey: string) => authenticateStore(deps, apiKey),
    findStore: (tid: string) => deps.merchants.findStore(tid),
    publishRateNotice: (params: { currency: string; rate: string }) => publishRateNotice(deps, params),
    quoteTokens: (params: Parameters<typeof quoteTokens>[1]) => quoteTokens(deps, params),
    runPayment: (store: StoreRecord, request: StartPaymentRequest, pos: PosSide) => runPayment(deps, store, request, pos),
    connectApp: (arrival: AppArrival) => deps.desk.connectApp(arrival),
    cancelPayment: (store: StoreRecord, request: CancelPaymentRequest) => cancelPayment(deps, store, request),
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;

/** The payment dependencies over a started platform, with the timing of its config (and an in-process desk unless given one). */
export function paymentDepsOf(platform: Pick<Platform, 'store' | 'wallet' | 'clock' | 'logger' | 'config'>, desk?: PairingDesk): PaymentDeps {
  const { config } = platform;
  const idleTimeoutMs = config.paymentIdleTimeoutSeconds * 1000;
  return {
    merchants: createMerchantRepository(platform.store.db),
    payments: createPaymentRepository(platform.store.db),
    settlementTokens: createSettlementTokenRepository(platform.store.db),
    wallet: platform.wallet,
    desk: desk ?? createPairingDesk({ appWaitMs: idleTimeoutMs }),
    clock: platform.clock,
    logger: platform.logger.child({ component: 'payments' }),
    network: config.paymentNetwork,
    timeZone: config.timeZone,
    defaultCurrency: config.defaultCurrency,
    pairingWindowMs: config.paymentPairingWindowSeconds * 1000,
    idleTimeoutMs,
  };
}
