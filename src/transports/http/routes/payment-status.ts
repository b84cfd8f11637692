import type { FastifyError, FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError, isDomainError } from '#shared/errors.ts';
import type { PaymentService } from '../../../payments/payment-service.ts';
import { resCodeByFamily } from '../../../payments/result-codes.ts';
import { httpStatusByCode } from '../errors.ts';
import { posApiKey, zodRoute } from '../route-schema.ts';

export interface PaymentStatusRoutesDeps {
  payments: Pick<PaymentService, 'authenticateStore' | 'paymentStatus'>;
}

const paymentParams = z.object({
  tid: z.string().describe('The store\'s terminal id (tid)'),
  tranNo: z.string().describe('The POS\'s transaction number (tran_no) of the payment'),
});

/**
 * `GET /v1/ict/payments/:tid/:tranNo` with `Authorization: Bearer <POS API key>`: what became of a
 * payment a POS started, for an integrator who lost the stream (docs/payments.md, "Looking up a
 * payment"). The body is the REST API's `{resultCode, resultMessage, resultData}`; a failed payment
 * carries the gRPC `res_code` and `res_message` it failed with.
 */
export async function paymentStatusRoutes(app: FastifyInstance, deps: PaymentStatusRoutesDeps): Promise<void> {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const domain = isDomainError(error) ? error : undefined;
    const status = domain ? httpStatusByCode[domain.code] : (error.statusCode ?? 500);
    if (status >= 500) request.log.error({ err: error }, 'payment status failed');
    const resultMessage = domain ? domain.message : status < 500 ? error.message : 'Internal server error';
    return reply.status(status).send({ resultCode: String(status), resultMessage, resultData: '' });
  });

  const route = zodRoute({ params: paymentParams, tags: ['pay'], summary: 'What became of a payment a POS started', security: posApiKey });
  app.get('/payments/:tid/:tranNo', route, async (request) => {
    const { tid, tranNo } = paymentParams.parse(request.params);
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    if (!match?.[1]) throw new DomainError('request.unauthorized', 'Authorization: Bearer <POS API key> required');
    const store = await deps.payments.authenticateStore(match[1]);
    const { failureCode, ...payment } = await deps.payments.paymentStatus(store, tid, tranNo);
    const result = payment.status === 'approved' ? { res_code: '00', res_message: 'Success' } : failureCode ? resCodeByFamily.payment[failureCode] : undefined;
    return { resultCode: '200', resultMessage: 'Success', resultData: { ...payment, ...(result && { resCode: result.res_code, resMessage: result.res_message }) } };
  });
}
