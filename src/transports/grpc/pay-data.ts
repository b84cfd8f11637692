import type { PaymentApproval, RewardClaim, SessionEvent, TransferRequest } from '../../pairing/session-events.ts';
import { formatDateTime } from '../../commerce/platform-dates.ts';
import type { Clock } from '#shared/clock.ts';
import type { CommonField, Content, PayData, PayData__Output, StateName } from './proto.ts';
import { resultOf, success, type CallFamily, type ResCode } from '../../payments/result-codes.ts';

/** Routing fields a response echoes from its request (all of Common but target_api and the response-only ones). */
const echoed = [
  'target_name', 'target_svc', 'target_package', 'source_svc', 'source_ver', 'source_addr',
  'req_timestamp', 'language_code', 'tran_no',
] as const satisfies ReadonlyArray<CommonField>;

/** docs/interfaces.md#grpc-payments's `target_api` of each call: every server message names its call, whatever the request said. */
export type CallName = 'startPayment' | 'doPayment' | 'cancelPayment' | 'issueReward' | 'cancelReward';

/** The stream call of each side. */
export const streamCall = { pos: 'startPayment', app: 'doPayment' } as const satisfies Record<'pos' | 'app', CallName>;

/** Which docs/interfaces.md#grpc-payments table a stream flow's codes come from: END_REWARD ends a reward claim. */
export const familyOf = (terminal: StateName): CallFamily => (terminal === 'END_REWARD' ? 'reward' : 'payment');

export interface ReplyContext {
  clock: Clock;
  timeZone: string;
}

/**
 * A response of call `api`: the request's routing fields, target_api (the call), rsp_timestamp
 * (yyyyMMddHHmmss, platform time zone), res_code, res_message.
 */
export function reply(context: ReplyContext, api: CallName, request: PayData__Output | undefined, result: ResCode, content: Content): PayData {
  const common: NonNullable<PayData['common']> = {};
  for (const field of echoed) common[field] = request?.common?.[field] ?? '';
  common.target_api = api;
  common.rsp_timestamp = formatDateTime(context.clock(), context.timeZone);
  common.res_code = result.res_code;
  common.res_message = result.res_message;
  return { common, content };
}

/** DoPayment REQUEST_TRANSFER (server to app): docs/interfaces.md#grpc-payments's field list. */
function appTransferRequest(r: TransferRequest): Content {
  return {
    state: 'REQUEST_TRANSFER', tran_no: r.tranNo, contract_address: r.contractAddress, token_amount: r.tokenAmount,
    settlement_address: r.settlementAddress, store_name: r.storeName, transfer_comment: r.transferComment,
    exchange_date_index: r.exchangeDateIndex, exchange_rate: r.exchangeRate, exchange_amount: r.exchangeAmount,
  };
}

/** END_PAY: to the POS with approval_no and approval_date, to the app without them. */
export function endPay(a: PaymentApproval, side: 'pos' | 'app'): Content {
  return {
    state: 'END_PAY', tran_no: a.tranNo, contract_address: a.contractAddress, token_symbol: a.tokenSymbol, user_address: a.userAddress,
    token_amount: a.tokenAmount, transfer_transaction_id: a.transferTransactionId,
    ...(side === 'pos' && { approval_no: a.approvalNo, approval_date: a.approvalDate }),
    exchange_date_index: a.exchangeDateIndex, exchange_rate: a.exchangeRate, exchange_amount: a.exchangeAmount,
  };
}

/** END_REWARD, to the POS and the app alike. */
export function endReward(c: RewardClaim): Content {
  return {
    state: 'END_REWARD', contract_address: c.contractAddress, token_symbol: c.tokenSymbol, user_address: c.userAddress,
    token_amount: c.tokenAmount, exchange_date_index: c.exchangeDateIndex, exchange_rate: c.exchangeRate, exchange_amount: c.exchangeAmount,
  };
}

/**
 * The PayData of a session event on one side. A failure is the flow's terminal state (END_PAY or
 * END_REWARD) with the failure's res_code from that flow's table and the tran_no, and nothing else.
 */
export function eventReply(
  context: ReplyContext, request: PayData__Output | undefined, event: SessionEvent, side: 'pos' | 'app', terminal: StateName,
): PayData {
  const api = streamCall[side];
  switch (event.type) {
    case 'request_transfer':
      return reply(context, api, request, success, appTransferRequest(event.request));
    case 'transfer_pending':
      return reply(context, api, request, success, { state: 'REQUEST_TRANSFER', tran_no: event.tranNo });
    case 'end_pay':
      return reply(context, api, request, success, endPay(event.approval, side));
    case 'end_reward':
      return reply(context, api, request, success, endReward(event.claim));
    case 'failed': {
      const state = event.flow === 'reward' ? 'END_REWARD' : event.flow === 'payment' ? 'END_PAY' : terminal;
      return reply(context, api, request, resultOf(event.error, familyOf(state)), {
        state, tran_no: event.tranNo ?? request?.content?.tran_no ?? '',
      });
    }
  }
}

/** Terminal events end the stream. */
export const isTerminal = (event: SessionEvent) => event.type === 'end_pay' || event.type === 'end_reward' || event.type === 'failed';
