import type { handleBidiStreamingCall } from '@grpc/grpc-js';
import { DomainError } from '../../shared/errors.ts';
import type { StateName, PayDataMessage, PayDataReply, ContentMessage } from './proto.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { bearerOf } from './caller-auth.ts';
import { replyStream } from './reply-stream.ts';

/**
 * StartPayment, the POS's stream: one START_PAY (a payment) or START_REWARD (a reward claim at the
 * POS) per stream. The POS may half-close after it; only a cancelled call counts as the POS
 * hanging up, which cancels a payment that has not reached the transfer yet.
 */
export function startPaymentHandler(deps: GrpcDeps): handleBidiStreamingCall<PayDataMessage, PayDataReply> {
  return (call) => {
    let terminal: StateName = 'END_PAY';
    const stream = replyStream(call, deps, 'pos', () => terminal);
    const abort = new AbortController();
    call.on('cancelled', () => abort.abort());
    call.on('error', () => abort.abort());
    let started = false;
    call.on('end', () => { if (!started) stream.end(); });
    call.on('data', (message: PayDataMessage) => {
      if (started) return;
      started = true;
      if (message.content?.state === 'START_REWARD') terminal = 'END_REWARD';
      handle(message).catch((error: unknown) => stream.fail(message, error));
    });

    async function handle(message: PayDataMessage): Promise<void> {
      const store = await deps.payments.authenticateStore(bearerOf(call.metadata));
      const content = message.content;
      const pos = { signal: abort.signal, send: (event: Parameters<typeof stream.event>[1]) => stream.event(message, event) };
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

function expirationOf(content: ContentMessage): number {
  const value = Number(content.expiration_time || '0');
  if (!Number.isSafeInteger(value) || value < 0) throw new DomainError('request.invalid', 'expiration_time must be Unix seconds', { details: 'expiration_time' });
  return value;
}
