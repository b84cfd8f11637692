import type { PaymentDeps } from './payment-deps.ts';
import type { AppArrival } from '../pairing/pairing-desk.ts';
import { addStore } from './add-store.ts';
import { authenticateStore } from './authenticate-store.ts';
import { publishRateNotice } from '../commerce/rate-notice.ts';
import { quoteTokens } from '../commerce/token-quote.ts';
import { runPayment, type PosSide, type StartPaymentRequest } from './run-payment.ts';
import { cancelPayment, type CancelPaymentRequest } from './cancel-payment.ts';
import { paymentStatus } from './payment-status.ts';
import type { StoreRecord } from '../store/merchant-repository.ts';

/** Payment operations with their dependencies bound: what the gRPC transport and the CLI call. */
export function createPaymentService(deps: PaymentDeps) {
  return {
    addStore: (params: { tid: string; name: string }) => addStore(deps, params),
    authenticateStore: (apiKey: string) => authenticateStore(deps, apiKey),
    findStore: (tid: string) => deps.merchants.findStore(tid),
    publishRateNotice: (params: Parameters<typeof publishRateNotice>[1]) => publishRateNotice(deps, params),
    quoteTokens: (params: Parameters<typeof quoteTokens>[1]) => quoteTokens(deps, params),
    runPayment: (store: StoreRecord, request: StartPaymentRequest, pos: PosSide) => runPayment(deps, store, request, pos),
    connectApp: (arrival: AppArrival) => deps.desk.connectApp(arrival),
    cancelPayment: (store: StoreRecord, request: CancelPaymentRequest) => cancelPayment(deps, store, request),
    /** A store's payment by its tran_no (its latest attempt): pending, approved or failed. */
    findPayment: (tid: string, tranNo: string) => deps.payments.findByTranNo(tid, tranNo),
    /** This store's payment by its tran_no, as a store integrator looks it up (settled first if stale). */
    paymentStatus: (store: StoreRecord, tid: string, tranNo: string) => paymentStatus(deps, store, tid, tranNo),
  };
}

export type PaymentService = ReturnType<typeof createPaymentService>;
