import type { SessionEvent } from '../../pairing/session-events.ts';
import { DomainError } from '#shared/errors.ts';
import type { Content__Output, PayData__Output, PaymentsServiceHandlers } from './proto.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { bearerOf } from './caller-auth.ts';
import { payDataStream } from './pay-data-stream.ts';

/**
 * StartPayment, the POS's stream: one START_PAY (a payment) or START_REWARD (a reward claim at the
 * POS) per stream; later messages are ignored. The POS may half-close after it; only a cancelled
 * call counts as the POS hanging up, which cancels a payment that has not reached the transfer yet.
 */
export function startPaymentHandler(deps: GrpcDeps): PaymentsServiceHandlers['StartPayment'] {
  return async (call) => {
    const stream = payDataStream(call, deps, 'pos');
    let flow: Promise<void> | undefined;
    for await (const message of stream.messages) {
      flow ??= run(message).catch((error: unknown) => stream.fail(message, error));
    }
    // The POS half-closed (or cancelled) before sending anything: nothing to answer.
    if (!flow) stream.end();

    async function run(message: PayData__Output): Promise<void> {
      if (message.content?.state === 'START_REWARD') stream.terminal = 'END_REWARD';
      const store = await deps.payments.authenticateStore(bearerOf(call.metadata));
      const content = message.content;
      const pos = { signal: stream.cancelled, send: (event: SessionEvent) => stream.event(message, event) };
      if (content?.state === 'START_PAY') {
        await deps.payments.runPayment(store, {
          tid: content.tid, tranNo: content.tran_no, exchangeAmount: content.exchange_amount, exchangeCurrency: content.exchange_currency,
          userUuid: content.user_uuid, contractAddress: content.contract_address, tokenSymbol: content.token_symbol,
          userAddress: content.user_address, expirationTime: expirationOf(content),
        }, pos);
      } else if (content?.state === 'START_REWARD') {
        await deps.rewards.claimAtPos(store, {
          tid: content.tid, tranNo: content.tran_no, rewardId: content.reward_id, tokenAmount: content.token_amount,
          userUuid: content.user_uuid, userAddress: content.user_address, contractAddress: content.contract_address,
        }, pos);
      } else {
        throw new DomainError('request.invalid', 'StartPayment begins with START_PAY or START_REWARD', { details: 'state' });
      }
    }
  };
}

function expirationOf(content: Content__Output): number {
  const value = Number(content.expiration_time || '0');
  if (!Number.isSafeInteger(value) || value < 0) throw new DomainError('request.invalid', 'expiration_time must be Unix seconds', { details: 'expiration_time' });
  return value;
}
