import { isDomainError } from '#shared/errors.ts';
import type { Content, Content__Output, PaymentsServiceHandlers } from './proto.ts';
import type { GrpcDeps } from './grpc-deps.ts';
import { bearerOf } from './caller-auth.ts';
import { reply, type CallName } from './pay-data.ts';
import { resultOf, success, type CallFamily } from '../../payments/result-codes.ts';

/** The store a POS's API key authenticates. */
type Store = Awaited<ReturnType<GrpcDeps['payments']['authenticateStore']>>;
/** `tranNo`: the call's common.tran_no (else content.tran_no), its idempotency key. */
type Operation = (store: Store, content: Content__Output, tranNo: string) => Promise<Content>;
/** Every unary method of PaymentsService has this one generated signature: PayData in, PayData out. */
type UnaryHandler = PaymentsServiceHandlers['CancelPayment'];

/**
 * A POS unary call: the store from its API key, then the operation; every outcome is a PayData named
 * `api`, a failure with its res_code from `family`'s table.
 */
function posCall(deps: GrpcDeps, api: CallName, family: CallFamily, operation: Operation): UnaryHandler {
  return (call, callback) => {
    const request = call.request;
    (async () => {
      const store = await deps.payments.authenticateStore(bearerOf(call.metadata));
      return operation(store, request.content ?? ({} as Content__Output), request.common?.tran_no || request.content?.tran_no || '');
    })().then(
      (content) => callback(null, reply(deps, api, request, success, content)),
      (error: unknown) => {
        if (!isDomainError(error)) deps.logger.error({ err: error, api }, 'call failed');
        callback(null, reply(deps, api, request, resultOf(error, family), { tran_no: request.content?.tran_no ?? '' }));
      },
    );
  };
}

export function cancelPaymentHandler(deps: GrpcDeps): UnaryHandler {
  return posCall(deps, 'cancelPayment', 'payment', async (store, c, tranNo) => {
    const done = await deps.payments.cancelPayment(store, {
      tranNo, tid: c.tid, transferTransactionId: c.transfer_transaction_id, tokenAmount: c.token_amount, exchangeAmount: c.exchange_amount,
      userAddress: c.user_address, contractAddress: c.contract_address,
    });
    return {
      contract_address: done.contractAddress, token_symbol: done.tokenSymbol, user_address: done.userAddress, token_amount: done.tokenAmount,
      exchange_amount: done.exchangeAmount, transfer_transaction_id: done.transferTransactionId, approval_no: done.approvalNo, approval_date: done.approvalDate,
    };
  });
}

export function issueRewardHandler(deps: GrpcDeps): UnaryHandler {
  return posCall(deps, 'issueReward', 'reward', async (store, c, tranNo) => {
    const reward = await deps.rewards.issueReward(store, {
      tranNo, tid: c.tid, rewardReason: c.reward_reason, exchangeAmount: c.exchange_amount, exchangeCurrency: c.exchange_currency,
      // Optional (beyond the interface's request fields): a reward in another accepted token.
      ...(c.contract_address && { contractAddress: c.contract_address }),
      ...(c.token_symbol && { tokenSymbol: c.token_symbol }),
    });
    return {
      contract_address: reward.contractAddress, token_symbol: reward.tokenSymbol, token_amount: reward.tokenAmount,
      exchange_date_index: reward.exchangeDateIndex, exchange_rate: reward.exchangeRate, exchange_amount: reward.exchangeAmount,
      reward_id: reward.rewardId, reward_date: reward.rewardDate,
    };
  });
}

export function cancelRewardHandler(deps: GrpcDeps): UnaryHandler {
  return posCall(deps, 'cancelReward', 'reward', async (store, c, tranNo) => {
    const done = await deps.rewards.cancelReward(store, { tranNo, rewardId: c.reward_id, tokenAmount: c.token_amount });
    return {
      contract_address: done.contractAddress, token_symbol: done.tokenSymbol, user_address: done.userAddress, token_amount: done.tokenAmount,
      transfer_transaction_id: done.transferTransactionId, approval_no: done.approvalNo, approval_date: done.approvalDate,
    };
  });
}
