import * as grpc from '@grpc/grpc-js';
import type { GrpcDeps, OpenStream } from './grpc-deps.ts';
import { loadPaymentsService, type PaymentsServiceHandlers } from './proto.ts';
import { cancelPaymentHandler, cancelRewardHandler, issueRewardHandler } from './unary-calls.ts';
import { addHealthService } from './grpc-health.ts';
import { addReflectionService } from './grpc-reflection.ts';
import { boundedStreamHandlers, connectionLimitOptions, type GrpcLimits } from './bounded-streams.ts';
import { withRequestId } from './request-id.ts';
import { decodingService, undecodableRequestInterceptor } from './undecodable-requests.ts';

/** How long the answers sent to the streams open at the end of a shutdown grace get to reach their callers. */
const shutdownFlushMs = 500;

export interface GrpcServer {
  /** The bound port (the configured one, or the one the OS chose for port 0). */
  port: number;
  /**
   * Turns health NOT_SERVING, stops accepting calls, lets running calls finish for `graceMs`; then
   * answers each payment stream still open in its terminal state with 10 (Internal server error),
   * and cancels what is left (health `Watch` streams included) once those answers are sent.
   */
  stop(graceMs?: number): Promise<void>;
}

/**
 * `g00.payments.v2.PaymentsService` on a plain HTTP/2 gRPC server (any language's client can call it),
 * beside the standard `grpc.health.v1.Health` service and server reflection, so generic tools
 * (grpcurl, Postman, buf, load-balancer probes) can see and call it without our `.proto`.
 */
export async function startGrpcServer(deps: GrpcDeps, options: { host: string; port: number; maxMessageBytes: number; interceptors?: grpc.ServerInterceptor[]; limits?: GrpcLimits }): Promise<GrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': options.maxMessageBytes,
    'grpc.keepalive_permit_without_calls': 1,
    // A request that is no PayData answers INVALID_ARGUMENT (last: the metrics interceptor sees that status).
    interceptors: [...(options.interceptors ?? []), undecodableRequestInterceptor],
    ...connectionLimitOptions(options.limits),
  });
  // Every call has a request id (x-request-id metadata in and out, reqId on its log lines).
  const openStreams = new Set<OpenStream>();
  const streams = boundedStreamHandlers({ ...deps, openStreams }, options.limits);
  const handlers: PaymentsServiceHandlers = {
    StartPayment: withRequestId(streams.StartPayment),
    DoPayment: withRequestId(streams.DoPayment),
    CancelPayment: withRequestId(cancelPaymentHandler(deps)),
    IssueReward: withRequestId(issueRewardHandler(deps)),
    CancelReward: withRequestId(cancelRewardHandler(deps)),
  };
  server.addService(decodingService(loadPaymentsService().service), handlers);
  const health = addHealthService(server);
  addReflectionService(server);
  const address = options.host.includes(':') ? `[${options.host}]:${options.port}` : `${options.host}:${options.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
  health.serving();
  deps.logger.info({ port }, 'gRPC payments server listening');
  return {
    port,
    stop: (graceMs = 5000) => new Promise<void>((resolve) => {
      health.notServing();
      let flush: NodeJS.Timeout | undefined;
      const timer = setTimeout(() => {
        for (const stream of [...openStreams]) stream.shutDown();
        flush = setTimeout(() => { server.forceShutdown(); resolve(); }, shutdownFlushMs);
      }, graceMs);
      server.tryShutdown(() => { clearTimeout(timer); clearTimeout(flush); resolve(); });
    }),
  };
}
