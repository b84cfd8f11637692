import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { X402Service } from '../../../x402/x402-service.ts';
import { zodRoute, parsed } from '../route-schema.ts';

export type X402RoutesDeps = X402Service;

const facilitatorKey = [{ facilitatorKey: [] }];
const requestBody = z.object({
  x402Version: z.number().describe('2'),
  paymentPayload: z.record(z.string(), z.unknown()).describe('The client\'s PAYMENT-SIGNATURE payload (x402 v2)'),
  paymentRequirements: z.record(z.string(), z.unknown()).describe('The requirements the resource server accepted it for'),
});
const statusParams = z.object({
  payer: z.string().describe('The payer\'s address (authorization.from)'),
  nonce: z.string().describe('The authorization\'s nonce (bytes32 hex)'),
});

/** `Prefer: wait=N` (RFC 7240): the caller's time budget in seconds, within the facilitator's own. */
function waitMsOf(request: FastifyRequest, defaultMs: number): number {
  const match = /(?:^|[,;\s])wait=(\d{1,6})(?:$|[,;\s])/.exec(String(request.headers.prefer ?? ''));
  return match?.[1] ? Math.min(Number(match[1]) * 1000, defaultMs) : defaultMs;
}

/**
 * The x402 facilitator on the HTTP port (docs/x402.md): `GET /x402/supported` (open), and with a
 * facilitator key (`Authorization: Bearer vxf_…`, rate-limited per key) `POST /x402/verify`,
 * `POST /x402/settle`, `GET /x402/settlements/:payer/:nonce` and its `/receipt` (the settling key's store only). Verify and settle answer the x402 v2
 * response shapes with status 200 (a refusal is `isValid: false` / `success: false` with the reason),
 * a settle still unmined when the time budget ends 202 with `errorReason: settlement_pending`, and a
 * payment-identifier id already bound to another request 409 (`payment_identifier_conflict`).
 */
export async function x402Routes(app: FastifyInstance, deps: X402RoutesDeps): Promise<void> {
  const authorized = async (request: FastifyRequest, reply: FastifyReply) => {
    const match = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '');
    const key = match?.[1] ? await deps.facilitator.authenticate(match[1]) : undefined;
    if (!key) {
      await reply.status(401).header('www-authenticate', 'Bearer').send({ error: 'Authorization: Bearer <facilitator API key> required (npx vixpay facilitator-key add)' });
      return undefined;
    }
    if (!deps.takeRequest(key.id, key.ratePerSecond)) {
      await reply.status(429).header('retry-after', '1').send({ error: `this key's rate (${key.ratePerSecond} requests per second) is used up; retry later` });
      return undefined;
    }
    return key;
  };

  app.get('/supported', zodRoute({ tags: ['x402'], summary: 'Schemes, networks and assets this facilitator settles (x402 v2)' }), () => deps.facilitator.supported());

  app.post('/verify', zodRoute({ body: requestBody, tags: ['x402'], security: facilitatorKey, summary: 'Verify a payment against its requirements' }),
    async (request, reply) => {
      const key = await authorized(request, reply);
      if (!key) return reply;
      const answer = await deps.facilitator.verify(request.body, { keyId: key.id, tid: key.tid });
      return reply.status(answer.conflict ? 409 : 200).send(answer.response);
    });

  app.post('/settle', zodRoute({
    body: requestBody, tags: ['x402'], security: facilitatorKey,
    summary: 'Settle a payment (idempotent per authorization); Prefer: wait=N bounds the wait for the chain',
  }), async (request, reply) => {
    const key = await authorized(request, reply);
    if (!key) return reply;
    const answer = await deps.facilitator.settle(request.body, { keyId: key.id, tid: key.tid, waitMs: waitMsOf(request, deps.settleWaitMs) });
    return reply.status(answer.conflict ? 409 : answer.pending ? 202 : 200).send(answer.response);
  });

  app.get('/settlements/:payer/:nonce', zodRoute({
    params: statusParams, tags: ['x402'], security: facilitatorKey, summary: 'Where a settlement accepted by /settle stands (for the key that settled it or another key of its store; 404 to any other)',
  }), async (request, reply) => {
    const key = await authorized(request, reply);
    if (!key) return reply;
    const { payer, nonce } = parsed(statusParams, request.params);
    const status = await deps.facilitator.status(payer, nonce, key);
    if (!status) return reply.status(404).send({ error: 'no settlement of this payer with this nonce was accepted for this key\'s store' });
    return status;
  });

  app.get('/settlements/:payer/:nonce/receipt', zodRoute({
    params: statusParams, tags: ['x402'], security: facilitatorKey, summary: 'The verifiable receipt of a settled payment, issued at settlement (docs/receipts.md); same keys as its status',
  }), async (request, reply) => {
    const key = await authorized(request, reply);
    if (!key) return reply;
    const { payer, nonce } = parsed(statusParams, request.params);
    const receipt = await deps.facilitator.receipt(payer, nonce, key);
    if (!receipt) return reply.status(404).send({ error: 'no settled payment of this payer with this nonce for this key\'s store' });
    return { receipts: [receipt] };
  });
}
