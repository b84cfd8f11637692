import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { withLogFields } from '#shared/log-context.ts';

/** The metadata key of a call's request id, as the HTTP header of the same name. */
export const requestIdKey = 'x-request-id';

/** A caller's own request id is kept when it is this simple (a UUID, a ULID, a proxy's trace id): as on HTTP. */
const wellFormedRequestId = /^[\w.:-]{1,128}$/;

/** The caller's well-formed `x-request-id`, or a new random UUID. */
export function requestIdOf(metadata: grpc.Metadata): string {
  const [incoming] = metadata.get(requestIdKey);
  return typeof incoming === 'string' && wellFormedRequestId.test(incoming) ? incoming : randomUUID();
}

interface CallWithMetadata {
  metadata: grpc.Metadata;
  sendMetadata(metadata: grpc.Metadata): void;
}

/**
 * A handler of any kind (unary or stream) with a request id: the caller's `x-request-id` metadata or
 * a new one, sent back at once in the response's initial metadata, and `reqId` on every log line
 * written while the call runs (whichever logger writes it).
 */
export function withRequestId<C extends CallWithMetadata, R extends unknown[]>(handler: (call: C, ...rest: R) => void): (call: C, ...rest: R) => void {
  return (call, ...rest) => {
    const reqId = requestIdOf(call.metadata);
    const reply = new grpc.Metadata();
    reply.set(requestIdKey, reqId);
    call.sendMetadata(reply);
    withLogFields({ reqId }, () => handler(call, ...rest));
  };
}
