import type { DomainErrorCode } from '#shared/errors.ts';

/** docs/interfaces.md#json-rpc-errors: protocol errors, each with the contract's text as `msg`. */
export const protocolErrors = {
  parse: { code: -32700, msg: 'parse error. not well formed' },
  unsupportedEncoding: { code: -32701, msg: 'parse error. unsupported encoding' },
  invalidRequest: { code: -32600, msg: 'server error. invalid xml-rpc. not conforming to spec.' },
  methodNotFound: { code: -32601, msg: 'server error. requested method not found' },
  invalidParams: { code: -32602, msg: 'server error. invalid method parameters' },
  internal: { code: -32603, msg: 'server error. internal xml-rpc error' },
} as const;

export interface ProtocolError {
  code: number;
  msg: string;
}

/** Adds what exactly was wrong to a protocol error's contract text. */
export function protocolError(kind: keyof typeof protocolErrors, detail?: string): ProtocolError {
  const base = protocolErrors[kind];
  return { code: base.code, msg: detail ? `${base.msg}: ${detail}` : base.msg };
}

/**
 * Service errors travel inside `result` with a `resultCode` other than "200" and
 * `resultData: ""`. The one mapping of domain codes for JSON-RPC; docs/token-api.md lists it.
 */
export const resultCodeByCode: Record<DomainErrorCode, string> = {
  'request.invalid': '400',
  'request.unauthorized': '401',
  'request.not_found': '404',
  'auth.rate_limited': '429',
  'auth.user_exists': '409',
  'auth.login_request_unknown': '400',
  'auth.login_request_pending': '401',
  'network.unknown': '421',
  'wallet.unknown_address': '404',
  'wallet.invalid_mnemonic': '400',
  'wallet.temp_key_invalid': '440',
  'wallet.hash_key_invalid': '441',
  'wallet.signature_invalid': '442',
  'wallet.insufficient_balance': '402',
  'wallet.unknown_token': '404',
  'token.not_a_contract': '400',
  'token.not_erc20': '400',
  'token.fee_on_transfer': '400',
  'token.rebasing': '400',
  'token.trial_failed': '400',
  'token.no_holder': '400',
  'token.needs_eip7702': '400',
  'chain.transaction_failed': '502',
  'chain.unavailable': '503',
  'chain.outcome_pending': '202',
  'block.not_found': '404',
  'did.not_system_issuer': '400',
  'did.not_system_verifier': '400',
  'did.key_not_held': '400',
  'did.holder_not_caller': '403',
  'did.secret_key_invalid': '401',
  'did.presentation_refused': '401',
  'payment.canceled_by_user': '409',
  'payment.expired': '410',
  'payment.in_progress': '409',
  'payment.not_found': '404',
  'payment.already_canceled': '409',
  'payment.bad_cancel_amount': '400',
  'payment.no_rate_notice': '503',
  'payment.token_not_accepted': '422',
  'reward.not_issued': '404',
  'reward.expired': '410',
  'reward.already_canceled': '409',
  'reward.bad_amount': '400',
  'reward.already_rewarded': '409',
  'store.full': '507',
  'store.unavailable': '503',
  'custody.unavailable': '503',
  internal: '500',
};
