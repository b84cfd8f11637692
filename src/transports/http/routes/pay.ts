import type { FastifyError, FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { PayDeps } from '../../../pay/pay.ts';
import { pay } from '../../../pay/pay.ts';
import { DomainError, isDomainError } from '../../../shared/errors.ts';
import { resultCodeByCode } from '../../jsonrpc/protocol-errors.ts';
import { httpStatusByCode } from '../errors.ts';
import { currentUser, requireUser, type AccessTokenVerifier } from '../auth-hook.ts';

export interface PayRoutesDeps {
  pay: PayDeps;
  verify: AccessTokenVerifier;
}

const payBody = z.object({
  tokenName: z.string().min(1).max(20),
  amount: z.string().min(1).max(100),
  myAddress: z.string().min(1).max(64),
  password: z.string().min(1).max(1024),
}).strict();

/**
 * `POST /v1/ict/pay` (JWT). Answers like the token API: `{resultCode, resultMessage, resultData}`,
 * `resultData: ""` on an error, with the HTTP status of the error as well.
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

  app.post('/pay', { preHandler: requireUser(deps.verify) }, async (request) => {
    const parsed = payBody.safeParse(request.body);
    if (!parsed.success) {
      throw new DomainError('request.invalid', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '));
    }
    const resultData = await pay(deps.pay, { userId: currentUser(request).userId, clientIp: request.ip, ...parsed.data });
    return { resultCode: '200', resultMessage: 'Success', resultData };
  });
}
