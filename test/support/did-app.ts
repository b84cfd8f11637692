import Fastify, { type FastifyInstance } from 'fastify';
import { startTestPlatform, type TestPlatform } from './platform.ts';
import { installHttpErrorHandler } from '../../src/transports/http/errors.ts';
import { authRoutes } from '../../src/transports/http/routes/auth.ts';
import { didRoutes } from '../../src/transports/http/routes/did.ts';
import { authVpRoutes } from '../../src/transports/http/routes/auth-vp.ts';
import type { DidModule } from '../../src/compose/platform.ts';
import { addUser, type AddUserReturnType } from '../../src/identity/add-user.ts';

/** A real platform with the DID and login routes wired as docs/did-api.md describes. */
export interface DidTestApp {
  t: TestPlatform;
  app: FastifyInstance;
  did: DidModule;
  /** A user with a custodial wallet, logged in: `token` is their access token. */
  newUser(id: string): Promise<AddUserReturnType & { token: string; name: string }>;
  post(url: string, payload: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  get(url: string): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startDidTestApp(): Promise<DidTestApp> {
  const t = await startTestPlatform();
  const p = t.platform;
  const { identity } = p;
  const { did } = p;
  const app = Fastify();
  installHttpErrorHandler(app);
  await app.register(authRoutes, { prefix: '/v2/auth', login: identity.login, websiteLogins: identity.websiteLogins });
  await app.register(didRoutes, {
    prefix: '/v2/did', did: did.service, verifyAccessToken: identity.jwt.verifyAccessToken,
    walletAddressOf: async (userId) => (await identity.users.findUser(userId))?.walletAddress ?? undefined,
  });
  await app.register(authVpRoutes, {
    prefix: '/v2/auth', verifyLoginPresentation: did.verifyLoginPresentation, findUserIdByHolder: did.findUserIdByHolder,
    login: identity.login, websiteLogins: identity.websiteLogins,
  });
  await app.ready();

  const toResult = (response: { statusCode: number; body: string }) => ({
    status: response.statusCode, body: response.body ? JSON.parse(response.body) : undefined,
  });
  const post = async (url: string, payload: unknown, headers: Record<string, string> = {}) =>
    toResult(await app.inject({ method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } }));
  return {
    t, app, did, post,
    get: async (url) => toResult(await app.inject({ method: 'GET', url })),
    async newUser(id) {
      const password = 'correct horse battery';
      const name = `User ${id}`;
      const added = await addUser({ users: identity.users, createWalletAccount: () => p.wallet.createAddress() }, { id, password, name });
      const login = await post('/v2/auth/auth-user', { id, password });
      if (login.status !== 200) throw new Error(`login of ${id} failed: ${JSON.stringify(login.body)}`);
      return { ...added, name, token: login.body.token as string };
    },
    async close() {
      await app.close();
      await t.stop();
    },
  };
}
