import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createJwtService, type JwtService } from '../../../identity/jwt.ts';
import { generateSigningKeySet } from '../../../identity/signing-keys.ts';
import { installHttpErrorHandler } from '../errors.ts';
import { authMeRoutes } from './auth-me.ts';

const wallet = '0x9a2bD1c3e4F5a6B7c8D9e0F1a2B3c4D5e6F7a8B9';
const vixp = '0x5FbDB2315678afecb367f032d93F642f64180aa3';
const users = new Map([
  ['alice', { id: 'alice', name: 'Alice Kim', walletAddress: wallet, did: null }],
  ['carol', { id: 'carol', name: 'Carol', walletAddress: null, did: null }],
]);
let app: FastifyInstance;
let jwt: JwtService;

before(async () => {
  jwt = createJwtService({ keys: await generateSigningKeySet() });
  app = Fastify();
  installHttpErrorHandler(app);
  await app.register(authMeRoutes, {
    prefix: '/v2/auth', verify: jwt.verifyAccessToken, findUser: async (id) => users.get(id),
    didOf: async (user) => (user.walletAddress === wallet ? `did:ethr:${wallet}` : null),
    paymentToken: async () => ({ contractAddress: vixp, tokenSymbol: 'VIXP' }),
  });
});
after(() => app.close());

const me = async (userId?: string) => app.inject({
  method: 'GET', url: '/v2/auth/me', headers: userId ? { authorization: `Bearer ${(await jwt.issueAccessToken(userId)).token}` } : {},
});

test('GET /v2/auth/me answers the user, wallet, DID and the QR code fields', async () => {
  const res = await me('alice');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), {
    userId: 'alice', name: 'Alice Kim', walletAddress: wallet, did: `did:ethr:${wallet}`,
    qrCode: { user_uuid: 'alice', user_address: wallet, contract_address: vixp, token_symbol: 'VIXP' },
  });
});

test('a user without a wallet has no QR code', async () => {
  const res = await me('carol');
  assert.equal(res.statusCode, 200);
  assert.deepEqual(res.json(), { userId: 'carol', name: 'Carol', walletAddress: null, did: null, qrCode: null });
});

test('GET /v2/auth/me needs a valid token of an existing user', async () => {
  const anonymous = await me();
  assert.equal(anonymous.statusCode, 401);
  assert.equal(anonymous.json().error.code, 'request.unauthorized');
  assert.equal((await me('deleted')).statusCode, 401);
  const forged = await app.inject({ method: 'GET', url: '/v2/auth/me', headers: { authorization: 'Bearer not.a.jwt' } });
  assert.equal(forged.statusCode, 401);
});
