import type { NewWebhookEvent } from '../store/webhook-repository.ts';
import type { PaymentApproval, RewardClaim } from '../pairing/session-events.ts';

/**
 * The events a store's webhook endpoints receive, built by the operation that makes the state
 * change and written with it (docs/webhooks.md). `data` carries the fields of the matching gRPC
 * message, with the proto's snake_case names; a failure carries the domain `failure_code`, and the
 * sender adds its `res_code` and `res_message` (the gRPC transport's table).
 */

/** END_PAY of an approved payment. */
export function paymentApprovedEvent(tid: string, approval: PaymentApproval): NewWebhookEvent {
  return {
    type: 'payment.approved', tid,
    data: {
      tid, tran_no: approval.tranNo, user_address: approval.userAddress, contract_address: approval.contractAddress,
      token_symbol: approval.tokenSymbol, token_amount: approval.tokenAmount, transfer_transaction_id: approval.transferTransactionId,
      approval_no: approval.approvalNo, approval_date: approval.approvalDate, exchange_date_index: approval.exchangeDateIndex,
      exchange_rate: approval.exchangeRate, exchange_amount: approval.exchangeAmount, exchange_currency: approval.exchangeCurrency,
      res_code: '00', res_message: 'Success',
    },
  };
}

/** A payment attempt that ended without moving tokens (its tran_no may be tried again). */
export function paymentFailedEvent(payment: { tid: string; tranNo: string; exchangeAmount: string; exchangeCurrency: string }, failureCode: string): NewWebhookEvent {
  return {
    type: 'payment.failed', tid: payment.tid,
    data: {
      tid: payment.tid, tran_no: payment.tranNo, exchange_amount: payment.exchangeAmount, exchange_currency: payment.exchangeCurrency,
      failure_code: failureCode,
    },
  };
}

/** CancelPayment's answer: a full or partial refund, settled on chain. */
export function paymentCanceledEvent(
  payment: { tid: string; tranNo: string; transferTransactionId: string },
  cancellation: { contractAddress: string; tokenSymbol: string; userAddress: string; tokenAmount: string; exchangeAmount: string; transferTransactionId: string; approvalNo: string; approvalDate: string },
): NewWebhookEvent {
  return {
    type: 'payment.canceled', tid: payment.tid,
    data: {
      tid: payment.tid, tran_no: payment.tranNo, payment_transfer_transaction_id: payment.transferTransactionId,
      contract_address: cancellation.contractAddress, token_symbol: cancellation.tokenSymbol, user_address: cancellation.userAddress,
      token_amount: cancellation.tokenAmount, exchange_amount: cancellation.exchangeAmount,
      transfer_transaction_id: cancellation.transferTransactionId, approval_no: cancellation.approvalNo, approval_date: cancellation.approvalDate,
      res_code: '00', res_message: 'Success',
    },
  };
}

/** IssueReward's answer. */
export function rewardIssuedEvent(
  tid: string,
  reward: { rewardId: string; rewardReason: string; rewardDate: string; contractAddress: string; tokenSymbol: string; tokenAmount: string; exchangeDateIndex: string; exchangeRate: string; exchangeAmount: string; exchangeCurrency: string },
): NewWebhookEvent {
  return {
    type: 'reward.issued', tid,
    data: {
      tid, reward_id: reward.rewardId, reward_reason: reward.rewardReason, reward_date: reward.rewardDate,
      contract_address: reward.contractAddress, token_symbol: reward.tokenSymbol, token_amount: reward.tokenAmount,
      exchange_date_index: reward.exchangeDateIndex, exchange_rate: reward.exchangeRate, exchange_amount: reward.exchangeAmount,
      exchange_currency: reward.exchangeCurrency, res_code: '00', res_message: 'Success',
    },
  };
}

/** END_REWARD: the reward paid out to the user. */
export function rewardClaimedEvent(tid: string, claim: RewardClaim): NewWebhookEvent {
  return {
    type: 'reward.claimed', tid,
    data: {
      tid, reward_id: claim.rewardId, user_address: claim.userAddress, contract_address: claim.contractAddress,
      token_symbol: claim.tokenSymbol, token_amount: claim.tokenAmount, transfer_transaction_id: claim.transferTransactionId,
      exchange_date_index: claim.exchangeDateIndex, exchange_rate: claim.exchangeRate, exchange_amount: claim.exchangeAmount,
      exchange_currency: claim.exchangeCurrency, res_code: '00', res_message: 'Success',
    },
  };
}

/** CancelReward's answer: voided (nothing moved, no transaction) or moved back from the user. */
export function rewardCanceledEvent(
  tid: string, rewardId: string,
  cancellation: { contractAddress: string; tokenSymbol: string; userAddress: string; tokenAmount: string; transferTransactionId: string; approvalNo: string; approvalDate: string },
): NewWebhookEvent {
  return {
    type: 'reward.canceled', tid,
    data: {
      tid, reward_id: rewardId, contract_address: cancellation.contractAddress, token_symbol: cancellation.tokenSymbol,
      user_address: cancellation.userAddress, token_amount: cancellation.tokenAmount, transfer_transaction_id: cancellation.transferTransactionId,
      approval_no: cancellation.approvalNo, approval_date: cancellation.approvalDate, res_code: '00', res_message: 'Success',
    },
  };
}

/** A store's day has closed: its statement (docs/statements.md) will not change any more. */
export function statementReadyEvent(tid: string, statement: { date: string; timeZone: string; path: string }): NewWebhookEvent {
  return {
    type: 'statement.ready', tid,
    data: { tid, date: statement.date, time_zone: statement.timeZone, statement_path: statement.path, res_code: '00', res_message: 'Success' },
  };
}
