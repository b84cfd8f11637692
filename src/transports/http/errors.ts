import type { FastifyError, FastifyInstance } from 'fastify';
import { isDomainError, type DomainErrorCode } from '#shared/errors.ts';

/** HTTP status of every domain error code: the one mapping of the HTTP APIs. */
export const httpStatusByCode: Record<DomainErrorCode, number> = {
  'request.invalid': 400,
  'request.unauthorized': 401,
  'request.not_found': 404,
  'auth.rate_limited': 429,
  'auth.user_exists': 409,
  'auth.login_request_unknown': 400,
  'auth.login_request_pending': 401,
  'network.unknown': 400,
  'wallet.unknown_address': 404,
  'wallet.invalid_mnemonic': 400,
  'wallet.temp_key_invalid': 401,
  'wallet.hash_key_invalid': 401,
  'wallet.signature_invalid': 401,
  'wallet.insufficient_balance': 402,
  'wallet.unknown_token': 400,
  'token.not_a_contract': 400,
  'token.not_erc20': 400,
  'token.fee_on_transfer': 400,
  'token.rebasing': 400,
  'token.trial_failed': 400,
  'token.no_holder': 400,
  'token.needs_eip7702': 400,
  'chain.transaction_failed': 502,
  'chain.unavailable': 503,
  'chain.outcome_pending': 202,
  'block.not_found': 404,
  'did.not_system_issuer': 400,
  'did.not_system_verifier': 400,
  'did.key_not_held': 400,
  'did.holder_not_caller': 403,
  'did.secret_key_invalid': 401,
  'did.presentation_refused': 401,
  'payment.canceled_by_user': 409,
  'payment.expired': 410,
  'payment.in_progress': 409,
  'payment.not_found': 404,
  'payment.already_canceled': 409,
  'payment.bad_cancel_amount': 400,
  'payment.no_rate_notice': 503,
  'payment.token_not_accepted': 422,
  'reward.not_issued': 404,
  'reward.expired': 410,
  'reward.already_canceled': 409,
  'reward.bad_amount': 400,
  'reward.already_rewarded': 409,
  'store.full': 507,
  'store.unavailable': 503,
  'custody.unavailable': 503,
  internal: 500,
};

/** The one error body of the HTTP APIs (docs/interfaces.md#authentication-api-errors). */
export interface HttpErrorBody {
  error: { code: string; message: string };
}

export function errorBody(code: string, message: string): HttpErrorBody {
  return { error: { code, message } };
}

/**
 * Maps every error once: domain errors to their status with a stable code, Fastify's own
 * (body too large, bad JSON, unsupported media type) to their 4xx, anything else to a 500 that
 * says nothing about internals; the cause is logged.
 */
export function installHttpErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (isDomainError(error)) {
      const status = httpStatusByCode[error.code];
      if (status >= 500) request.log.error({ err: error }, 'request failed');
      return reply.status(status).send(errorBody(error.code, error.message));
    }
    const status = error.statusCode ?? 500;
    if (status < 500) {
      const code = error.validation ? 'request.invalid' : (error.code ?? 'request.invalid');
      return reply.status(status).send(errorBody(code, error.message));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.status(500).send(errorBody('internal', 'Internal server error'));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(errorBody('request.not_found', `no route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
