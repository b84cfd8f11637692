import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import Fastify, { type FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { DomainError } from '#shared/errors.ts';
import type { PayService } from '../../../pay/idempotent-pay.ts';
import { payRoutes } from './pay.ts';

// REST pay's body and headers from outside (POST /v1/ict/pay, docs/pay-api.md): whatever a client
// sends is handed to the pay service exactly as sent, or refused with the API's answer
// ({resultCode, resultMessage, resultData: ""}, a 4xx), never a 500. The pay service here records
// what it is given and refuses an amount the way the real one does (docs/pay-api.md codes).
const seed = 29;
let app: FastifyInstance;
const given: unknown[] = [];

before(async () => {
  app = Fastify({ bodyLimit: 64 * 1024 });
  const pay = {
    async pay(params: { amount: string }, key?: string) {
      given.push({ params, key });
      if (!/^\d+(\.\d+)?$/.test(params.amount)) throw new DomainError('request.invalid', 'amount must be a decimal string', { details: 'amount' });
      return { kind: 'answered', replayed: false, outcome: { ok: { status: 'settled', transactionId: '0x01' } } };
    },
  } as unknown as PayService;
  await app.register(payRoutes, { prefix: '/v1/ict', pay, verify: async (token: string) => {
    if (token !== 'good') throw new DomainError('request.unauthorized', 'invalid access token');
    return { userId: 'u-1' } as never;
  } });
  await app.ready();
});

after(async () => { await app.close(); });

const text = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('VIXP', '1', '0.5', '1e3', '-1', '0x10', ' 1', '١', 'x'.repeat(2000)));
const bodies = fc.oneof(
  fc.record({ tokenName: text, amount: text, myAddress: text, password: text }, { requiredKeys: [] }),
  fc.record({ tokenName: fc.anything({ maxDepth: 1 }), amount: fc.anything({ maxDepth: 1 }), myAddress: text, password: text, extra: fc.anything({ maxDepth: 0 }) }, { requiredKeys: [] }),
  fc.anything({ maxDepth: 2 }),
);

function assertApiAnswer(response: { statusCode: number; body: string }, what: unknown): void {
  assert.ok(response.statusCode < 500, `${JSON.stringify(what)}: ${response.statusCode} ${response.body}`);
  const body = JSON.parse(response.body);
  assert.equal(typeof body.resultCode, 'string', response.body);
  assert.equal(typeof body.resultMessage, 'string', response.body);
  if (response.statusCode >= 400) assert.equal(body.resultData, '', response.body);
}

test('any JSON body: handed to the pay service exactly as sent when it has the four text fields, else a 400 with the reason; never a 500', async () => {
  await fc.assert(fc.asyncProperty(bodies, fc.option(fc.oneof(fc.string({ maxLength: 300 }), fc.uuid()), { nil: undefined }), async (body, key) => {
    given.length = 0;
    const headers: Record<string, string> = { authorization: 'Bearer good', 'content-type': 'application/json' };
    if (key !== undefined) headers['idempotency-key'] = key;
    const payload = JSON.stringify(body) ?? 'null';
    let response;
    try {
      response = await app.inject({ method: 'POST', url: '/v1/ict/pay', headers, payload });
    } catch (error) {
      // A header value Node itself refuses to send (a control character) never reaches the server.
      if (error instanceof TypeError && /header/i.test(error.message)) return;
      throw error;
    }
    assertApiAnswer(response, { body, key });
    const fields = typeof body === 'object' && body !== null && !Array.isArray(body) ? body as Record<string, unknown> : undefined;
    const limits = { tokenName: 20, amount: 100, myAddress: 64, password: 1024 } as const;
    const valid = fields !== undefined && Object.keys(fields).every((k) => k in limits)
      && Object.entries(limits).every(([k, max]) => { const v = fields[k]; return typeof v === 'string' && v.length >= 1 && v.length <= max; });
    const keyValid = key === undefined || /^[\x21-\x7e]{1,255}$/.test(key);
    if (valid && keyValid) {
      assert.equal(given.length, 1);
      assert.deepEqual(given[0], { params: { userId: 'u-1', clientIp: '127.0.0.1', ...(body as object) }, key });
    } else {
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(given.length, 0);
    }
  }), { seed, numRuns: 400 });
});

test('a body that is not JSON, not an object, or sent without a token is refused with the API answer', async () => {
  for (const payload of ['{', 'tokenName=VIXP', '\u0000', '[1,2]', '"x"', '{"amount":1e400}', '']) {
    assertApiAnswer(await app.inject({ method: 'POST', url: '/v1/ict/pay', headers: { authorization: 'Bearer good', 'content-type': 'application/json' }, payload }), payload);
  }
  assertApiAnswer(await app.inject({ method: 'POST', url: '/v1/ict/pay', headers: { authorization: 'Bearer good', 'content-type': 'text/plain' }, payload: 'x' }), 'text/plain');
  const noToken = await app.inject({ method: 'POST', url: '/v1/ict/pay', payload: { tokenName: 'VIXP', amount: '1', myAddress: '0x1', password: 'p' } });
  assert.equal(noToken.statusCode, 401);
  assertApiAnswer(noToken, 'no token');
  assertApiAnswer(await app.inject({ method: 'POST', url: '/v1/ict/pay', headers: { authorization: 'Bearer bad' }, payload: {} }), 'bad token');
});
