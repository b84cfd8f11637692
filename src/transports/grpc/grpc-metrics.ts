import * as grpc from '@grpc/grpc-js';
import type { Metrics } from '#shared/metrics.ts';
import type { CallName } from './pay-data.ts';

const service = '/g00.payments.v2.PaymentsService/';
/** The payment service's methods as the metrics name them (docs/interfaces.md#response-codes's target_api); the two streams' kinds. */
const calls: Readonly<Record<string, { call: CallName; kind?: 'pos' | 'app' }>> = {
  [`${service}StartPayment`]: { call: 'startPayment', kind: 'pos' },
  [`${service}DoPayment`]: { call: 'doPayment', kind: 'app' },
  [`${service}CancelPayment`]: { call: 'cancelPayment' },
  [`${service}IssueReward`]: { call: 'issueReward' },
  [`${service}CancelReward`]: { call: 'cancelReward' },
};

/**
 * A server interceptor that sees every PaymentsService call from open to close: the open streams
 * by kind, each call's duration, and each call counted once at its end by the res_code of the last
 * PayData it answered (a stream's END_PAY or END_REWARD; `none` when it answered nothing). It sees
 * what the caller got, authentication failures included, without touching the handlers. Health and
 * reflection calls pass through uncounted.
 */
export function grpcMetricsInterceptor(metrics: Metrics): grpc.ServerInterceptor {
  return (method, call) => {
    const known = calls[method.path];
    if (!known) return new grpc.ServerInterceptingCall(call);
    const { call: name, kind } = known;
    const endTimer = metrics.grpcDuration.startTimer({ call: name });
    if (kind) metrics.grpcOpenStreams.inc({ kind });
    let resCode = 'none';
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      endTimer();
      if (kind) metrics.grpcOpenStreams.dec({ kind });
      metrics.grpcCalls.inc({ call: name, res_code: resCode });
    };
    return new grpc.ServerInterceptingCall(call, {
      start: (next) => next({ onCancel: end }),
      sendMessage: (message: { common?: { res_code?: unknown } } | undefined, next) => {
        const code = message?.common?.res_code;
        // Two digits from docs/interfaces.md#response-codes's tables: anything else would be an unbounded label value.
        if (typeof code === 'string') resCode = /^\d{2}$/.test(code) ? code : 'other';
        next(message);
      },
      sendStatus: (status, next) => {
        next(status);
        end();
      },
    });
  };
}
