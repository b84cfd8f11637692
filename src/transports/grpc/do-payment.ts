import type { handleBidiStreamingCall } from '@grpc/grpc-js';
import type { AppConnection } from '../../payments/pairing-desk.ts';
import { DomainError } from '../../shared/errors.ts';
import type { StateName, PayDataMessage, PayDataReply } from './proto.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { authenticateUser } from './caller-auth.ts';
import { replyStream } from './reply-stream.ts';

/**
 * DoPayment, the user app's stream. START_PAY (with the app's user_uuid) waits for a POS; then
 * TRANSFER answers REQUEST_TRANSFER. Ending or cancelling the stream before TRANSFER cancels the
 * payment (01). START_REWARD claims a reward from a printed receipt.
 */
export function doPaymentHandler(deps: GrpcDeps): handleBidiStreamingCall<PayDataMessage, PayDataReply> {
  return (call) => {
    let terminal: StateName = 'END_PAY';
    const stream = replyStream(call, deps, 'app', () => terminal);
    let latest: PayDataMessage | undefined;
    let connection: AppConnection | undefined;
    let hungUp = false;
    let started = false;
    const hangUp = () => {
      hungUp = true;
      connection?.hangUp();
      if (!started) stream.end();
    };
    call.on('end', hangUp);
    call.on('cancelled', hangUp);
    call.on('error', hangUp);

    call.on('data', (message: PayDataMessage) => {
      latest = message;
      const state = message.content?.state;
      if (!started) {
        started = true;
        if (state === 'START_REWARD') terminal = 'END_REWARD';
        start(message).catch((error: unknown) => stream.fail(message, error));
      } else if (state === 'TRANSFER' && connection) {
        const c = message.content!;
        connection.submitTransfer({ tempKey: c.transfer_key, hashKey: c.hash_key, signature: c.transfer_signature, comment: c.transfer_comment });
      } else {
        stream.fail(message, new DomainError('request.invalid', `unexpected ${state ?? 'message'} on DoPayment`, { details: 'state' }));
        connection?.hangUp();
      }
    });

    async function start(message: PayDataMessage): Promise<void> {
      const user = await authenticateUser(deps, call.metadata);
      const content = message.content;
      if (content?.state === 'START_PAY') {
        if (!content.user_uuid) throw new DomainError('request.invalid', 'DoPayment START_PAY carries the app\'s user_uuid', { details: 'user_uuid' });
        if (hungUp) return stream.end();
        connection = deps.payments.connectApp({
          userUuid: content.user_uuid, userId: user.userId, userAddress: user.address,
          sink: { send: (event) => stream.event(latest, event) },
        });
      } else if (content?.state === 'START_REWARD') {
        const claim = await deps.rewards.claimFromReceipt({
          rewardId: content.reward_id, tokenAmount: content.token_amount, tokenSymbol: content.token_symbol,
          userAddress: content.user_address, account: user.address, contractAddress: content.contract_address,
        });
        stream.event(message, { type: 'end_reward', claim });
      } else {
        throw new DomainError('request.invalid', 'DoPayment begins with START_PAY or START_REWARD', { details: 'state' });
      }
    }
  };
}
