import * as grpc from '@grpc/grpc-js';
import { bearerOf } from './caller-auth.ts';
import type { PayDataCall } from './pay-data-call.ts';

/** The bounds on StartPayment and DoPayment streams (config: GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS, GRPC_MAX_STREAMS_PER_CLIENT). */
export interface StreamLimits {
  /** A stream with no message by then is ended DEADLINE_EXCEEDED. */
  firstMessageTimeoutMs: number;
  /** Open streams per client: a JWT user, a POS (store), or a peer address when unauthenticated. */
  maxStreamsPerClient: number;
}

/** Whom a stream counts against: `user:<id>`, `pos:<tid>`, or `peer:<address>` when its credentials do not verify. */
export type ClientKeyOf = (call: PayDataCall) => Promise<string>;

/**
 * A count of open streams per client. `open` answers false beyond the cap; otherwise the stream
 * holds a slot until it finishes, is cancelled or fails.
 */
export function createStreamSlots(maxPerClient: number) {
  const open = new Map<string, number>();
  return {
    open(key: string, call: PayDataCall): boolean {
      const count = open.get(key) ?? 0;
      if (count >= maxPerClient) return false;
      open.set(key, count + 1);
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        const left = (open.get(key) ?? 1) - 1;
        if (left > 0) open.set(key, left);
        else open.delete(key);
      };
      // 'finish': the server sent its status; 'cancelled': the client went away; 'close': destroyed.
      for (const event of ['finish', 'cancelled', 'close', 'error']) call.once(event, release);
      return true;
    },
    /** Open streams of `key` (for tests and metrics). */
    count: (key: string) => open.get(key) ?? 0,
  };
}

/**
 * Wraps a streaming handler with the per-client cap: a stream beyond it is answered
 * RESOURCE_EXHAUSTED before the handler sees it. The handler reads the call's messages as usual
 * (the call stays paused, buffering, while the client is identified).
 */
export function withStreamCap(
  handler: (call: PayDataCall) => Promise<void> | void,
  slots: ReturnType<typeof createStreamSlots>,
  clientKeyOf: ClientKeyOf,
  limit: number,
): (call: PayDataCall) => Promise<void> {
  return async (call) => {
    const key = await clientKeyOf(call);
    if (!slots.open(key, call)) {
      endWithStatus(call, grpc.status.RESOURCE_EXHAUSTED, `too many open streams for this client (GRPC_MAX_STREAMS_PER_CLIENT=${limit})`);
      return;
    }
    await handler(call);
  };
}

/** The client a stream counts against: the verified credential's owner, else the peer address. */
export function clientKeyResolver(verify: (token: string) => Promise<string>): ClientKeyOf {
  return async (call) => {
    try {
      return await verify(bearerOf(call.metadata));
    } catch {
      return `peer:${peerAddressOf(call.getPeer())}`;
    }
  };
}

/** `127.0.0.1:5000`, `[::1]:5000`, `ipv4:…`: the address without its port. */
export function peerAddressOf(peer: string): string {
  const bare = peer.replace(/^ipv[46]:/, '');
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(bare);
  if (bracketed?.[1]) return bracketed[1];
  const colons = bare.split(':').length - 1;
  return colons === 1 ? bare.slice(0, bare.lastIndexOf(':')) : bare;
}

/**
 * Ends the call with `code` unless the first message arrives within `timeoutMs`; `received`
 * disarms it (also safe to call again). Cancelled calls disarm it themselves.
 */
export function firstMessageDeadline(call: PayDataCall, timeoutMs: number | undefined): { received(): void } {
  if (!timeoutMs) return { received: () => undefined };
  const timer = setTimeout(() => {
    endWithStatus(call, grpc.status.DEADLINE_EXCEEDED, `no message within ${timeoutMs / 1000} s of opening the stream (GRPC_FIRST_MESSAGE_TIMEOUT_SECONDS)`);
  }, timeoutMs);
  const received = () => clearTimeout(timer);
  call.once('cancelled', received);
  call.once('finish', received);
  return { received };
}

/** Sends a status other than OK and ends the call (grpc-js turns an 'error' event into the status). */
function endWithStatus(call: PayDataCall, code: grpc.status, details: string): void {
  if (call.cancelled || call.destroyed || call.writableEnded) return;
  call.emit('error', Object.assign(new Error(details), { code, details }));
}
