import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createJwtService, type JwtService } from '../src/identity/jwt.ts';
import { createLoginRateLimiter } from '../src/identity/login-rate-limiter.ts';
import { createLoginService } from '../src/identity/login.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';
import { generateSigningKeySet } from '../src/identity/signing-keys.ts';
import { createUserRepository } from '../src/store/user-repository.ts';
import { createUserService } from '../src/identity/users.ts';
import { createWebsiteLoginRepository } from '../src/store/website-login-repository.ts';
import { createWebsiteLoginService, type WebsiteLoginService } from '../src/identity/website-login.ts';
import { parseTrustProxy } from '../src/config/config.ts';
import { storeFactories } from './support/store-factories.ts';
import { installHttpErrorHandler } from '../src/transports/http/errors.ts';
import { authRoutes } from '../src/transports/http/routes/auth.ts';
import { payRoutes, type PayRoutesDeps } from '../src/transports/http/routes/pay.ts';
import { pay, type PayDeps, type PayParameters } from '../src/pay/pay.ts';
import { trustProxyOption } from '../src/transports/http/client-address.ts';

// The addresses of one deployment: a load balancer in front of the server, a website's server
// script and an attacker who saw the website's QR code.
const proxy = '10.0.0.5';
const site = '203.0.113.10';
const attacker = '198.51.100.66';
const wallet = '0x1111111111111111111111111111111111111111';

interface ProxyTestApp { app: FastifyInstance; jwt: JwtService; websiteLogins: WebsiteLoginService; close(): Promise<void> }

/** The auth and pay routes as app.ts wires them, behind `TRUST_PROXY=<setting>`. */
async function buildApp(setting: string): Promise<ProxyTestApp> {
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no sqlite store factory');
  const opened = await sqlite.open();
  const clock = () => Date.UTC(2025, 0, 1);
  const users = createUserService({ users: createUserRepository(opened.store.db), passwords: createPasswordHasher(), clock });
  await users.createUser({ id: 'alice', password: 'correct horse battery', name: 'Alice', walletAddress: wallet });
  const jwt = createJwtService({ keys: await generateSigningKeySet(), clock });
  const rateLimiter = createLoginRateLimiter({ clock });
  const login = createLoginService({ users, jwt, rateLimiter, clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(opened.store.db), clock });
  const app = Fastify({ trustProxy: trustProxyOption(parseTrustProxy(setting)) });
  installHttpErrorHandler(app);
  await app.register(authRoutes, { prefix: '/v2/auth', login, websiteLogins });
  // REST pay up to its password check (throttled per user id and client address); no transfer here.
  const payDeps: PayDeps = {
    users, rateLimiter, network: 'ethereum', receiver: '0x2222222222222222222222222222222222222222',
    wallet: {
      transferFromCustody: () => Promise.reject(new Error('no transfer in this test')),
      getTokenInfo: async () => ({ contractAddress: '0x3333333333333333333333333333333333333333', tokenSymbol: 'VIXP', decimals: 18, network: 'ethereum', chainId: 31337 }),
    },
    settlementTokens: { find: async () => undefined, findBySymbol: async () => [] },
  };
  const payService = { pay: (params: PayParameters) => pay(payDeps, params), status: () => Promise.reject(new Error('unused')) };
  await app.register(payRoutes, { prefix: '/v1/ict', verify: jwt.verifyAccessToken, pay: payService as unknown as PayRoutesDeps['pay'] });
  await app.ready();
  return { app, jwt, websiteLogins, close: async () => { await app.close(); await opened.dispose(); } };
}

/** A request as it reaches the server: from `peer`, with the X-Forwarded-For it carries (if any). */
const post = (t: ProxyTestApp, url: string, payload: object, peer: string, forwardedFor?: string, token?: string) => t.app.inject({
  method: 'POST', url, payload, remoteAddress: peer,
  headers: { ...(forwardedFor && { 'x-forwarded-for': forwardedFor }), ...(token && { authorization: `Bearer ${token}` }) },
});

for (const setting of ['1', proxy, '10.0.0.0/8']) {
  describe(`TRUST_PROXY=${setting}`, () => {
    let t: ProxyTestApp;
    before(async () => { t = await buildApp(setting); });
    after(() => t.close());

    test('a forged X-Forwarded-For reads no one\'s website-login result', async () => {
      // The site's server script, through the load balancer (which appends the site's address).
      const started = await post(t, '/v2/auth/auth-user-by-app', { requestId: 'https://shop.example/?' }, proxy, site);
      assert.equal(started.statusCode, 200);
      const { requestId } = started.json();
      await t.websiteLogins.complete(requestId, 'alice');

      // The attacker writes the site's address first; the load balancer appends the attacker's.
      const forged = await post(t, '/v2/auth/auth-user-result-by-app', { requestId }, proxy, `${site}, ${attacker}`);
      assert.equal(forged.statusCode, 400);
      assert.equal(forged.json().error.code, '400');
      if (setting !== '1') {
        // With addresses, the attacker reaching the server directly is not believed either.
        const direct = await post(t, '/v2/auth/auth-user-result-by-app', { requestId }, attacker, site);
        assert.equal(direct.statusCode, 400);
      }

      const real = await post(t, '/v2/auth/auth-user-result-by-app', { requestId }, proxy, site);
      assert.equal(real.statusCode, 200, 'the site itself still reads its result');
      assert.equal(real.json().userId, 'alice');
    });

    test('a forged X-Forwarded-For bypasses no login throttle', async () => {
      // 30 failed passwords from one client, each with another made-up address in front.
      for (let i = 0; i < 30; i++) {
        await post(t, '/v2/auth/auth-user', { id: `nobody-${i}`, password: 'guess' }, proxy, `192.0.2.${i}, ${attacker}`);
      }
      const last = await post(t, '/v2/auth/auth-user', { id: 'nobody-29', password: 'guess' }, proxy, `192.0.2.99, ${attacker}`);
      assert.equal(last.statusCode, 429, 'past its budget, the address is slowed on the accounts it has been failing on');
      const other = await post(t, '/v2/auth/auth-user', { id: 'nobody-x', password: 'guess' }, proxy, site);
      assert.equal(other.statusCode, 401, 'another client is not');
    });

    test('a forged X-Forwarded-For bypasses no pay throttle', async () => {
      const prober = '198.51.100.99';
      for (let i = 0; i < 29; i++) await post(t, '/v2/auth/auth-user', { id: `probe-${i}`, password: 'guess' }, proxy, `192.0.2.${i}, ${prober}`);
      const { token } = await t.jwt.issueAccessToken('alice');
      const body = { tokenName: 'VIXP', amount: '1', myAddress: wallet, password: 'wrong password' };
      // The 30th failure is a wrong password for alice's pay: the address is now slowed on her account.
      assert.equal((await post(t, '/v1/ict/pay', body, proxy, `192.0.2.77, ${prober}`, token)).statusCode, 401);
      const forged = await post(t, '/v1/ict/pay', body, proxy, `${site}, ${prober}`, token);
      assert.equal(forged.statusCode, 429, 'the prober\'s address stays throttled whatever it writes in front');
      const fromSite = await post(t, '/v1/ict/pay', body, proxy, site, token);
      assert.equal(fromSite.statusCode, 401, 'another client is not throttled');
    });
  });
}
