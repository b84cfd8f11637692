/**
 * Typed domain errors with stable codes. Domain code throws these; each transport maps
 * `code` exactly once (see the `Record<DomainErrorCode, ...>` tables under src/transports).
 * Adding a code here does not compile until every transport maps it.
 */
export const domainErrorCodes = [
  'request.invalid',
  'request.unauthorized',
  'request.not_found',
  'auth.rate_limited',
  'auth.user_exists',
  'auth.login_request_unknown',
  'auth.login_request_pending',
  'network.unknown',
  'wallet.unknown_address',
  'wallet.invalid_mnemonic',
  'wallet.temp_key_invalid',
  'wallet.hash_key_invalid',
  'wallet.signature_invalid',
  'wallet.insufficient_balance',
  'wallet.unknown_token',
  /** `vixpay token allow` refusals (docs/decisions/tokens.md "Which tokens the platform accepts"). */
  'token.not_a_contract',
  'token.not_erc20',
  'token.fee_on_transfer',
  'token.rebasing',
  'token.trial_failed',
  'token.no_holder',
  'token.needs_eip7702',
  'chain.transaction_failed',
  'chain.unavailable',
  'chain.outcome_pending',
  'block.not_found',
  'did.not_system_issuer',
  'did.not_system_verifier',
  'did.key_not_held',
  'did.holder_not_caller',
  'did.secret_key_invalid',
  'did.presentation_refused',
  'payment.canceled_by_user',
  'payment.expired',
  'payment.in_progress',
  'payment.not_found',
  'payment.already_canceled',
  'payment.bad_cancel_amount',
  'payment.no_rate_notice',
  'payment.token_not_accepted',
  'reward.not_issued',
  'reward.expired',
  'reward.already_canceled',
  'reward.bad_amount',
  'reward.already_rewarded',
  /** The store could not write (SQLite: the disk is full): nothing of the request was done; retry later. */
  'store.full',
  /**
   * The database does not answer (PostgreSQL restarted, failed over, unreachable): the request may
   * have stopped anywhere, so what it did is not known from here (see `leavesOutcomeOpen`); retry.
   */
  'store.unavailable',
  /**
   * The key custody (an HSM through PKCS#11) cannot sign: token removed, library not loaded, PIN
   * refused, session lost. Nothing was signed or sent; retry later (the next call reconnects).
   */
  'custody.unavailable',
  'internal',
] as const;

export type DomainErrorCode = (typeof domainErrorCodes)[number];

export interface DomainErrorOptions {
  /** Extra, non-secret facts for the caller (e.g. which parameter was wrong). */
  details?: string;
  cause?: unknown;
}

export class DomainError extends Error {
  override name = 'DomainError';
  readonly code: DomainErrorCode;
  readonly details: string | undefined;

  constructor(code: DomainErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.details = options.details;
  }
}

export function isDomainError(error: unknown): error is DomainError {
  return error instanceof DomainError;
}

/**
 * Errors after which a money operation's outcome is not known: a transfer sent and not settled yet,
 * an unexpected failure, or a database lost mid-way (the transfer may have been journaled and sent
 * before it went). Such an operation stays pending until the chain settles it; it is never treated
 * as refused (which would free its tran_no or key for a second transfer).
 */
export function leavesOutcomeOpen(error: unknown): boolean {
  return !isDomainError(error) || error.code === 'chain.outcome_pending' || error.code === 'internal' || error.code === 'store.unavailable';
}
