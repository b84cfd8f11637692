import { isDomainError, type DomainErrorCode } from '../../shared/errors.ts';

export interface ResCode {
  res_code: string;
  res_message: string;
}

export const success: ResCode = { res_code: '00', res_message: 'Success' };
const internal: ResCode = { res_code: '10', res_message: 'Internal server error' };
// SPEC.md's codes, then ours (11 and up) for what SPEC.md does not list; docs/payments.md has the table.
const invalid: ResCode = { res_code: '11', res_message: 'Invalid request' };
const unauthorized: ResCode = { res_code: '12', res_message: 'Unauthorized' };
const tokenApi: ResCode = { res_code: '04', res_message: 'Token API error' };

/** res_code of every domain error: the one mapping of the gRPC transport. */
export const resCodeByCode: Record<DomainErrorCode, ResCode> = {
  'request.invalid': invalid,
  'request.unauthorized': unauthorized,
  'request.not_found': invalid,
  'auth.rate_limited': unauthorized,
  'auth.user_exists': invalid,
  'auth.login_request_unknown': unauthorized,
  'auth.login_request_pending': unauthorized,
  'network.unknown': invalid,
  'wallet.unknown_address': tokenApi,
  'wallet.invalid_mnemonic': tokenApi,
  'wallet.temp_key_invalid': tokenApi,
  'wallet.hash_key_invalid': tokenApi,
  'wallet.signature_invalid': tokenApi,
  'wallet.insufficient_balance': { res_code: '02', res_message: 'Insufficient balance' },
  'wallet.unknown_token': invalid,
  'chain.transaction_failed': internal,
  'chain.unavailable': internal,
  'chain.outcome_pending': internal,
  'block.not_found': internal,
  'did.not_system_issuer': invalid,
  'did.not_system_verifier': invalid,
  'did.key_not_held': invalid,
  'did.holder_not_caller': unauthorized,
  'did.secret_key_invalid': unauthorized,
  'did.presentation_refused': unauthorized,
  'payment.canceled_by_user': { res_code: '01', res_message: 'Canceled by the user' },
  'payment.expired': { res_code: '03', res_message: 'Transaction time expired' },
  'payment.in_progress': { res_code: '13', res_message: 'Payment in progress' },
  'payment.not_found': { res_code: '14', res_message: 'Payment not found' },
  'payment.already_canceled': { res_code: '15', res_message: 'Payment already canceled' },
  'payment.bad_cancel_amount': { res_code: '16', res_message: 'Bad cancel amount' },
  'payment.no_rate_notice': { res_code: '17', res_message: 'No exchange rate notice' },
  'payment.token_not_accepted': { res_code: '18', res_message: 'Token not accepted' },
  'reward.not_issued': { res_code: '01', res_message: 'Reward not issued' },
  'reward.expired': { res_code: '02', res_message: 'Reward expired' },
  'reward.already_canceled': { res_code: '03', res_message: 'Reward already canceled' },
  'reward.bad_amount': { res_code: '04', res_message: 'Bad reward amount' },
  'reward.already_rewarded': { res_code: '05', res_message: 'Already rewarded' },
  internal,
};

/** The res_code of any error; unknown errors are internal and say nothing about internals. */
export function resCodeOf(error: unknown): ResCode {
  return isDomainError(error) ? resCodeByCode[error.code] : internal;
}

/**
 * The result of a failed call. SPEC.md's codes (01 to 10) carry exactly SPEC.md's res_message, so
 * clients may compare it; our own codes (11 and up) add what exactly was wrong.
 */
export function resultOf(error: unknown): ResCode {
  const code = resCodeOf(error);
  if (!isDomainError(error) || Number(code.res_code) <= 10) return code;
  return { res_code: code.res_code, res_message: `${code.res_message}: ${error.message}` };
}
