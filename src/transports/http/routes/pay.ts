import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { PayOutcome, PayService } from '../../../pay/idempotent-pay.ts';
import { DomainError, isDomainError } from '#shared/errors.ts';
import { resultCodeByCode } from '../../jsonrpc/protocol-errors.ts';
import { httpStatusByCode } from '../errors.ts';
import { currentUser, requireUser, type AccessTokenVerifier } from '../auth-hook.ts';
import { userJwt, zodRoute } from '../route-schema.ts';

export interface PayRoutesDeps {
  pay: PayService;
  verify: AccessTokenVerifier;
}

const payBody = z.object({
  tokenName: z.string().min(1).max(20),
  amount: z.string().min(1).max(100),
  myAddress: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
}).strict();

/** Stripe's limit; printable ASCII without spaces (a UUID v4 is what we suggest). */
const idempotencyKey = /^[\x21-\x7e]{1,255}$/;
const payHeaders = z.object({
  'idempotency-key': z.string().regex(idempotencyKey).optional()
    .describe('Makes a retry safe: the same key and body answer the first outcome again (docs/pay-api.md)'),
});
const transactionParams = z.object({ transactionId: z.string().describe('resultData.transactionId of the payment') });

/**
 * `POST /v1/ict/pay` (JWT, optional `Idempotency-Key`) and `GET /v1/ict/pay/:transactionId`.
 * Answers like the token API: `{resultCode, resultMessage, resultData}`, `resultData: ""` on an
 * error, with the HTTP status of the error as well.
 */
export async function payRoutes(app: FastifyInstance, deps: PayRoutesDeps): Promise<void> {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const domain = isDomainError(error) ? error : undefined;
    const status = domain ? httpStatusByCode[domain.code] : (error.statusCode ?? 500);
    if (status >= 500) request.log.error({ err: error }, 'pay failed');
    const resultCode = domain ? resultCodeByCode[domain.code] : String(status);
    const resultMessage = domain ? domain.message : status < 500 ? error.message : 'Internal server error';
    return reply.status(status).send({ resultCode, resultMessage, resultData: '' });
  });

  const sendOutcome = (reply: FastifyReply, outcome: PayOutcome) => {
    if ('error' in outcome) {
      const { code, message } = outcome.error;
      return reply.status(httpStatusByCode[code]).send({ resultCode: resultCodeByCode[code], resultMessage: message, resultData: '' });
    }
    if (outcome.ok.status === 'pending') {
      return reply.status(202).send({ resultCode: '202', resultMessage: 'the transfer is sent but not settled on chain yet', resultData: outcome.ok });
    }
    return reply.status(200).send({ resultCode: '200', resultMessage: 'Success', resultData: outcome.ok });
  };

  const payRoute = zodRoute({ body: payBody, headers: payHeaders, tags: ['pay'], summary: 'Pay in VIXP or an allowed token from the user\'s wallet', security: userJwt });
  app.post('/pay', { ...payRoute, preHandler: requireUser(deps.verify) }, async (request, reply) => {
    const headers = payHeaders.safeParse(request.headers);
    if (!headers.success) {
      throw new DomainError('request.invalid', 'Idempotency-Key must be 1 to 255 printable ASCII characters without spaces');
    }
    const header = headers.data['idempotency-key'];
    const parsed = payBody.safeParse(request.body);
    if (!parsed.success) {
      throw new DomainError('request.invalid', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    }
    const answer = await deps.pay.pay({ userId: currentUser(request).userId, clientIp: request.ip, ...parsed.data }, header);
    if (answer.kind === 'in_flight') {
      return reply.status(409).send({ resultCode: '409', resultMessage: 'A request with this Idempotency-Key is still in progress; retry later', resultData: '' });
    }
    if (answer.kind === 'mismatch') {
      return reply.status(422).send({ resultCode: '422', resultMessage: 'This Idempotency-Key was used with another request body', resultData: '' });
    }
    if (answer.replayed) reply.header('idempotent-replayed', 'true');
    return sendOutcome(reply, answer.outcome);
  });

  const statusRoute = zodRoute({ params: transactionParams, tags: ['pay'], summary: 'The state of a payment of the user', security: userJwt });
  app.get('/pay/:transactionId', { ...statusRoute, preHandler: requireUser(deps.verify) }, async (request) => {
    const { transactionId } = transactionParams.parse(request.params);
    const resultData = await deps.pay.status(currentUser(request).userId, transactionId);
    return { resultCode: '200', resultMessage: 'Success', resultData };
  });
}
