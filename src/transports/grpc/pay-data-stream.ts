import type { SessionEvent } from '../../pairing/session-events.ts';
import type { Logger } from '#shared/logger.ts';
import { DomainError, isDomainError } from '#shared/errors.ts';
import type { PayData, PayData__Output, StateName } from './proto.ts';
import { eventReply, familyOf, isTerminal, reply, streamCall, type ReplyContext } from './pay-data.ts';
import { resultOf } from '../../payments/result-codes.ts';
import { firstMessageDeadline } from './stream-limits.ts';
import type { OpenStream } from './grpc-deps.ts';
import type { PayDataCall } from './pay-data-call.ts';

/** One side's bidirectional stream, as its handler sees it: the caller's messages in, PayData out. */
export interface PayDataStream {
  /** The caller's messages, in order; ends when the caller half-closes, cancels or the call fails. */
  readonly messages: AsyncIterable<PayData__Output>;
  /** Aborted when the caller cancels the call or the call fails (a half-close is not a cancel). */
  readonly cancelled: AbortSignal;
  /** The flow's terminal state, for failures: END_PAY, or END_REWARD for a reward claim. */
  terminal: StateName;
  /** Writes a session event as PayData echoing `request`; a terminal event ends the stream. */
  event(request: PayData__Output | undefined, event: SessionEvent): void;
  /** Answers an error with its res_code (from the flow's table) in the flow's terminal state, then ends the stream. */
  fail(request: PayData__Output | undefined, error: unknown): void;
  end(): void;
}

/**
 * Wraps one side's call. Writes after the stream ended, or after the peer went away, are dropped:
 * a flow finishing for the other side must not fail because this side hung up. With
 * `firstMessageTimeoutMs`, a call with no message by then is ended DEADLINE_EXCEEDED (no flow
 * started, so there is no request to answer in the contract's shape).
 */
export function payDataStream(
  call: PayDataCall, context: ReplyContext & { logger: Logger; firstMessageTimeoutMs?: number; openStreams?: Set<OpenStream> }, side: 'pos' | 'app',
): PayDataStream {
  const deadline = firstMessageDeadline(call, context.firstMessageTimeoutMs);
  const cancel = new AbortController();
  call.once('cancelled', () => cancel.abort());
  call.once('error', () => cancel.abort());
  let ended = false;
  const write = (data: PayData) => {
    if (ended || call.cancelled || call.destroyed) return;
    call.write(data);
  };
  /** The caller's latest message: what a shutdown's answer echoes. */
  let latest: PayData__Output | undefined;
  const open: OpenStream = {
    shutDown: () => stream.fail(latest, new DomainError('internal', 'the server is shutting down')),
  };
  context.openStreams?.add(open);
  const end = () => {
    if (ended) return;
    ended = true;
    context.openStreams?.delete(open);
    if (!call.cancelled && !call.destroyed) call.end();
  };
  call.once('close', () => context.openStreams?.delete(open));
  const stream: PayDataStream = {
    messages: remembering(messagesOf(call, deadline.received), (message) => { latest = message; }),
    cancelled: cancel.signal,
    terminal: 'END_PAY',
    event(request, event) {
      write(eventReply(context, request, event, side, stream.terminal));
      if (isTerminal(event)) end();
    },
    fail(request, error) {
      if (!isDomainError(error)) context.logger.error({ err: error, side }, 'stream failed');
      write(reply(context, streamCall[side], request, resultOf(error, familyOf(stream.terminal)), { state: stream.terminal, tran_no: request?.content?.tran_no ?? '' }));
      end();
    },
    end,
  };
  return stream;
}

/** The messages, each one noted before it is handled. */
async function* remembering(messages: AsyncGenerator<PayData__Output>, note: (message: PayData__Output) => void): AsyncGenerator<PayData__Output> {
  for await (const message of messages) {
    note(message);
    yield message;
  }
}

/**
 * The call's messages as they arrive. A half-close ends them ('end'), so does a cancel (grpc-js
 * destroys the call: a premature close); a failed call ends them too, its caller is gone either way.
 * The call's writable side stays open (`destroyOnReturn: false`): the server still answers a caller
 * that half-closed. The stream's own iterator, not `events.on`: that one keeps two 2,048-slot queues
 * per call, most of an idle stream's memory.
 */
async function* messagesOf(call: PayDataCall, received: () => void): AsyncGenerator<PayData__Output> {
  try {
    for await (const message of call.iterator({ destroyOnReturn: false })) {
      received();
      yield message as PayData__Output;
    }
  } catch {
    // 'error' or a premature close: the call failed; nothing more will arrive.
  } finally {
    received();
  }
}
