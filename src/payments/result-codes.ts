import { isDomainError, type DomainErrorCode } from '#shared/errors.ts';

export interface ResCode {
  res_code: string;
  res_message: string;
}

/**
 * The two tables of docs/interfaces.md#response-codes: a code 01–05 means one thing in payment calls (StartPayment START_PAY,
 * DoPayment START_PAY and TRANSFER, CancelPayment) and another in reward calls (IssueReward,
 * CancelReward, START_REWARD at the POS and from a receipt).
 */
export type CallFamily = 'payment' | 'reward';

export const success: ResCode = { res_code: '00', res_message: 'Success' };
const internal: ResCode = { res_code: '10', res_message: 'Internal server error' };

// docs/interfaces.md#response-codes's payment table.
const canceledByUser: ResCode = { res_code: '01', res_message: 'Canceled by the user' };
const insufficientBalance: ResCode = { res_code: '02', res_message: 'Insufficient balance' };
const timeExpired: ResCode = { res_code: '03', res_message: 'Transaction time expired' };
const tokenApi: ResCode = { res_code: '04', res_message: 'Token API error' };

// Ours (11 and up) for what docs/interfaces.md#response-codes's tables do not list; docs/payments.md has the table.
const invalid: ResCode = { res_code: '11', res_message: 'Invalid request' };
const unauthorized: ResCode = { res_code: '12', res_message: 'Unauthorized' };
// In reward calls the payment table's conditions cannot use 01–04 (those are reward codes there).
const rewardInsufficientBalance: ResCode = { res_code: '19', res_message: 'Insufficient balance' };
const rewardTransferFailed: ResCode = { res_code: '20', res_message: 'Token transfer failed' };
const rewardCanceledByUser: ResCode = { res_code: '21', res_message: 'Canceled by the user' };
const rewardTimeExpired: ResCode = { res_code: '22', res_message: 'Transaction time expired' };

/** The domain codes whose res_code depends on the call family: docs/interfaces.md#response-codes's two tables. */
type TableCode =
  | 'wallet.unknown_address' | 'wallet.invalid_mnemonic' | 'wallet.temp_key_invalid' | 'wallet.hash_key_invalid' | 'wallet.signature_invalid'
  | 'wallet.insufficient_balance' | 'chain.transaction_failed' | 'payment.canceled_by_user' | 'payment.expired'
  | 'reward.not_issued' | 'reward.expired' | 'reward.already_canceled' | 'reward.bad_amount' | 'reward.already_rewarded';

/** Every other domain code: the same res_code in every call. */
const everyCall: Record<Exclude<DomainErrorCode, TableCode>, ResCode> = {
  'request.invalid': invalid,
  'request.unauthorized': unauthorized,
  'request.not_found': invalid,
  'auth.rate_limited': unauthorized,
  'auth.user_exists': invalid,
  'auth.login_request_unknown': unauthorized,
  'auth.login_request_pending': unauthorized,
  'network.unknown': invalid,
  'wallet.unknown_token': invalid,
  'token.not_a_contract': invalid,
  'token.not_erc20': invalid,
  'token.fee_on_transfer': invalid,
  'token.rebasing': invalid,
  'token.trial_failed': invalid,
  'token.no_holder': invalid,
  'token.needs_eip7702': invalid,
  'chain.unavailable': internal,
  'chain.outcome_pending': internal,
  'block.not_found': internal,
  'did.not_system_issuer': invalid,
  'did.not_system_verifier': invalid,
  'did.key_not_held': invalid,
  'did.holder_not_caller': unauthorized,
  'did.secret_key_invalid': unauthorized,
  'did.presentation_refused': unauthorized,
  'payment.in_progress': { res_code: '13', res_message: 'Payment in progress' },
  'payment.not_found': { res_code: '14', res_message: 'Payment not found' },
  'payment.already_canceled': { res_code: '15', res_message: 'Payment already canceled' },
  'payment.bad_cancel_amount': { res_code: '16', res_message: 'Bad cancel amount' },
  'payment.no_rate_notice': { res_code: '17', res_message: 'No exchange rate notice' },
  'payment.token_not_accepted': { res_code: '18', res_message: 'Token not accepted' },
  'store.full': { res_code: '23', res_message: 'Storage full' },
  'store.unavailable': internal,
  'custody.unavailable': internal,
  internal,
};

/**
 * res_code of every domain error, per call family: the one mapping of the gRPC transport. A reward
 * error never arises in a payment call; were it to, it is a fault of ours (10).
 */
export const resCodeByFamily: Record<CallFamily, Record<DomainErrorCode, ResCode>> = {
  payment: {
    ...everyCall,
    'wallet.unknown_address': tokenApi,
    'wallet.invalid_mnemonic': tokenApi,
    'wallet.temp_key_invalid': tokenApi,
    'wallet.hash_key_invalid': tokenApi,
    'wallet.signature_invalid': tokenApi,
    // Reverted on chain: the token transfer failed (its authorization is cancelled, nothing moved).
    'chain.transaction_failed': tokenApi,
    'wallet.insufficient_balance': insufficientBalance,
    'payment.canceled_by_user': canceledByUser,
    'payment.expired': timeExpired,
    'reward.not_issued': internal,
    'reward.expired': internal,
    'reward.already_canceled': internal,
    'reward.bad_amount': internal,
    'reward.already_rewarded': internal,
  },
  reward: {
    ...everyCall,
    'wallet.unknown_address': rewardTransferFailed,
    'wallet.invalid_mnemonic': rewardTransferFailed,
    'wallet.temp_key_invalid': rewardTransferFailed,
    'wallet.hash_key_invalid': rewardTransferFailed,
    'wallet.signature_invalid': rewardTransferFailed,
    'chain.transaction_failed': rewardTransferFailed,
    'wallet.insufficient_balance': rewardInsufficientBalance,
    'payment.canceled_by_user': rewardCanceledByUser,
    'payment.expired': rewardTimeExpired,
    'reward.not_issued': { res_code: '01', res_message: 'Reward not issued' },
    'reward.expired': { res_code: '02', res_message: 'Reward expired' },
    'reward.already_canceled': { res_code: '03', res_message: 'Reward already canceled' },
    'reward.bad_amount': { res_code: '04', res_message: 'Bad reward amount' },
    'reward.already_rewarded': { res_code: '05', res_message: 'Already rewarded' },
  },
};

/** The res_code of any error in a call of `family`; unknown errors are internal and say nothing about internals. */
export function resCodeOf(error: unknown, family: CallFamily): ResCode {
  return isDomainError(error) ? resCodeByFamily[family][error.code] : internal;
}

/**
 * The result of a failed call. docs/interfaces.md#response-codes's codes (01 to 10) carry exactly docs/interfaces.md#response-codes's res_message, so
 * clients may compare it; our own codes (11 and up) add what exactly was wrong.
 */
export function resultOf(error: unknown, family: CallFamily): ResCode {
  const code = resCodeOf(error, family);
  if (!isDomainError(error) || Number(code.res_code) <= 10) return code;
  return { res_code: code.res_code, res_message: `${code.res_message}: ${error.message}` };
}
