import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { PayData, PayData__Output } from './proto.ts';

/** A StartPayment or DoPayment call, typed by the generated PaymentsServiceHandlers. */
export type PayDataCall = ServerDuplexStream<PayData__Output, PayData>;
