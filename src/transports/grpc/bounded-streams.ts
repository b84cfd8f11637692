import type { ChannelOptions } from '@grpc/grpc-js';
import type { GrpcDeps } from './grpc-deps.ts';
import type { PaymentsServiceHandlers } from './proto.ts';
import { startPaymentHandler } from './start-payment.ts';
import { doPaymentHandler } from './do-payment.ts';
import { clientKeyResolver, createStreamSlots, withStreamCap, type StreamLimits } from './stream-limits.ts';

/** Bounds of the payment server (docs/decisions/operating.md "Bounded resources"); each has a config setting. */
export interface GrpcLimits extends StreamLimits {
  /** HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS of each connection. */
  maxConcurrentStreamsPerConnection: number;
  /** Server pings every `keepaliveTimeMs`; a connection whose ping is unanswered for `keepaliveTimeoutMs` is closed. */
  keepaliveTimeMs: number;
  keepaliveTimeoutMs: number;
  /** A connection without any call for this long is sent GOAWAY. */
  maxConnectionIdleMs: number;
}

/** grpc-js server options for the connection-level bounds. */
export function connectionLimitOptions(limits: GrpcLimits | undefined): ChannelOptions {
  if (!limits) return {};
  return {
    'grpc.max_concurrent_streams': limits.maxConcurrentStreamsPerConnection,
    'grpc.keepalive_time_ms': limits.keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': limits.keepaliveTimeoutMs,
    'grpc.max_connection_idle_ms': limits.maxConnectionIdleMs,
  };
}

/**
 * StartPayment and DoPayment, bounded: a stream with no message within the first-message timeout is
 * ended DEADLINE_EXCEEDED, and a client's streams beyond the cap are refused RESOURCE_EXHAUSTED.
 * A client is the POS's store (its API key), the app's user (its JWT), else the peer address.
 * Without `limits` (a test composing its own server), the streams are unbounded as before.
 */
export function boundedStreamHandlers(
  deps: GrpcDeps, limits: GrpcLimits | undefined,
): Pick<PaymentsServiceHandlers, 'StartPayment' | 'DoPayment'> {
  if (!limits) return { StartPayment: startPaymentHandler(deps), DoPayment: doPaymentHandler(deps) };
  const streamDeps = { ...deps, firstMessageTimeoutMs: limits.firstMessageTimeoutMs };
  const slots = createStreamSlots(limits.maxStreamsPerClient);
  return {
    StartPayment: withStreamCap(startPaymentHandler(streamDeps), slots,
      clientKeyResolver(async (apiKey) => `pos:${(await deps.payments.authenticateStore(apiKey)).tid}`), limits.maxStreamsPerClient),
    DoPayment: withStreamCap(doPaymentHandler(streamDeps), slots,
      clientKeyResolver(async (token) => `user:${(await deps.verifyAccessToken(token)).userId}`), limits.maxStreamsPerClient),
  };
}
