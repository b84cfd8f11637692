import type { ServerDuplexStream } from '@grpc/grpc-js';
import type { SessionEvent } from '../../payments/payment-events.ts';
import type { Logger } from '../../shared/logger.ts';
import { isDomainError } from '../../shared/errors.ts';
import type { PayDataMessage, PayDataReply, StateName } from './proto.ts';
import { eventReply, isTerminal, reply, type ReplyContext } from './pay-data.ts';
import { resultOf } from './res-codes.ts';

export interface ReplyStream {
  /** Writes a session event as PayData echoing `request`; a terminal event ends the stream. */
  event(request: PayDataMessage | undefined, event: SessionEvent): void;
  /** Answers an error with its res_code in the flow's terminal state, then ends the stream. */
  fail(request: PayDataMessage | undefined, error: unknown): void;
  end(): void;
  readonly ended: boolean;
}

/**
 * One side's server stream. Writes after the stream ended, or after the peer went away, are
 * dropped: a flow finishing for the other side must not fail because this side hung up.
 */
export function replyStream(
  call: ServerDuplexStream<PayDataMessage, PayDataReply>,
  context: ReplyContext & { logger: Logger },
  side: 'pos' | 'app',
  terminal: () => StateName,
): ReplyStream {
  let ended = false;
  const write = (data: PayDataReply) => {
    if (ended || call.cancelled || call.destroyed) return;
    call.write(data);
  };
  const end = () => {
    if (ended) return;
    ended = true;
    if (!call.cancelled && !call.destroyed) call.end();
  };
  return {
    event(request, event) {
      write(eventReply(context, request, event, side, terminal()));
      if (isTerminal(event)) end();
    },
    fail(request, error) {
      if (!isDomainError(error)) context.logger.error({ err: error, side }, 'stream failed');
      write(reply(context, request, resultOf(error), { state: terminal(), tran_no: request?.content?.tran_no ?? '' }));
      end();
    },
    end,
    get ended() { return ended; },
  };
}
