import { DomainError } from '#shared/errors.ts';
import type { PayData__Output, PaymentsServiceHandlers } from './proto.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { authenticateUser } from './caller-auth.ts';
import { payDataStream } from './pay-data-stream.ts';

/** The app's side of a paired payment: forwards its TRANSFER and its hang-up. */
type AppConnection = ReturnType<GrpcDeps['payments']['connectApp']>;

/**
 * DoPayment, the user app's stream. START_PAY (docs/interfaces.md#grpc-payments: only `state`) waits for a POS; then
 * TRANSFER answers REQUEST_TRANSFER. Ending or cancelling the stream before TRANSFER cancels the
 * payment (01). START_REWARD claims a reward from a printed receipt.
 */
export function doPaymentHandler(deps: GrpcDeps): PaymentsServiceHandlers['DoPayment'] {
  return async (call) => {
    const stream = payDataStream(call, deps, 'app');
    /** The app's latest message: what a message the server pushes later echoes. */
    let latest: PayData__Output | undefined;
    let connection: AppConnection | undefined;
    let flow: Promise<void> | undefined;
    let hungUp = false;

    for await (const message of stream.messages) {
      latest = message;
      const state = message.content?.state;
      if (!flow) {
        flow = start(message).catch((error: unknown) => stream.fail(message, error));
      } else if (state === 'TRANSFER' && connection) {
        const c = message.content!;
        connection.submitTransfer({ tempKey: c.transfer_key, hashKey: c.hash_key, signature: c.transfer_signature, comment: c.transfer_comment });
      } else {
        stream.fail(message, new DomainError('request.invalid', `unexpected ${state ?? 'message'} on DoPayment`, { details: 'state' }));
        connection?.hangUp();
      }
    }
    // The app half-closed or cancelled: before TRANSFER that cancels the payment (01).
    hungUp = true;
    connection?.hangUp();
    if (!flow) stream.end();

    async function start(message: PayData__Output): Promise<void> {
      if (message.content?.state === 'START_REWARD') stream.terminal = 'END_REWARD';
      const user = await authenticateUser(deps, call.metadata);
      const content = message.content;
      if (content?.state === 'START_PAY') {
        const userUuid = await pairingKeyOf(deps, user.userId, content.user_uuid);
        if (hungUp) return stream.end();
        connection = deps.payments.connectApp({
          userUuid, userId: user.userId, userAddress: user.address,
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

/**
 * The user_uuid the app waits under. docs/interfaces.md#grpc-payments's app sends only `state`: its QR code's user_uuid is the
 * user's id (the JWT's user), so the POS sends that. An app may send a one-time user_uuid of its own
 * instead (the POS then sends that one), but never another user's id: it would hold that user's place.
 */
async function pairingKeyOf(deps: GrpcDeps, userId: string, ownUuid: string): Promise<string> {
  if (!ownUuid || ownUuid === userId) return userId;
  if (await deps.findUserWallet(ownUuid)) {
    throw new DomainError('request.invalid', 'user_uuid is another user\'s id; send only state, or a one-time user_uuid', { details: 'user_uuid' });
  }
  return ownUuid;
}
