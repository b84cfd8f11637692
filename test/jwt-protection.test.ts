import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { createJwtService } from '../src/identity/jwt.ts';
import { generateSigningKeySet, loadOrCreateSigningKeys, signingKeyFileName } from '../src/identity/signing-keys.ts';
import { addUser } from '../src/identity/add-user.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';

// Every JWT-protected HTTP API refuses the same bad tokens. (The payment server's metadata check is
// in test/payments-edges.test.ts.)
let t: TestPlatform;
const bad: Record<string, string> = {};
let good: string;
let erinAddress: string;

before(async () => {
  t = await startTestPlatform();
  erinAddress = (await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id: 'erin', password: 'erin password', name: 'Erin' })).address;
  const keys = await loadOrCreateSigningKeys(path.join(t.dataDir, signingKeyFileName));
  good = (await t.platform.identity.jwt.issueAccessToken('erin')).token;
  const past = createJwtService({ keys, clock: () => Date.now() - 3 * 3600_000, ttlSeconds: 3600 });
  bad.expired = (await past.issueAccessToken('erin')).token;
  bad.foreignKey = (await createJwtService({ keys: await generateSigningKeySet() }).issueAccessToken('erin')).token;
  bad.algNone = new UnsecuredJWT({ sub: 'erin', iss: 'vixpay', aud: 'vixpay' }).setIssuedAt().setExpirationTime('1h').encode();
  bad.hs256 = await new SignJWT({ sub: 'erin' }).setProtectedHeader({ alg: 'HS256' }).setIssuer('vixpay').setAudience('vixpay')
    .setIssuedAt().setExpirationTime('1h').sign(new TextEncoder().encode('x'.repeat(32)));
  const [header, payload, signature] = good.split('.');
  const changed = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: 'mallory' };
  bad.changedPayload = [header, Buffer.from(JSON.stringify(changed)).toString('base64url'), signature].join('.');
  bad.garbage = 'not-a-jwt';
});
after(async () => { await t?.stop(); });

const protectedCalls = () => [
  { method: 'POST' as const, url: '/v1/ict/pay', payload: { tokenName: 'VIXP', amount: '1', myAddress: erinAddress, password: 'erin password' } },
  { method: 'POST' as const, url: '/v2/did/create-vc', payload: { holder: 'did:ethr:0x0000000000000000000000000000000000000001', issuer: 'x', userInfo: { a: 1 } } },
  { method: 'GET' as const, url: '/v1/ipfs/id' },
  { method: 'GET' as const, url: '/v1/ipfs/version' },
  { method: 'GET' as const, url: '/v1/ipfs/QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH' },
];

test('alg none, HS256, a foreign key, an expired or changed token, garbage and no token: 401 everywhere', async () => {
  for (const call of protectedCalls()) {
    for (const [kind, token] of [...Object.entries(bad), ['missing', '']]) {
      const response = await t.app.inject({ ...call, headers: token ? { authorization: `Bearer ${token}` } : {} });
      assert.equal(response.statusCode, 401, `${call.url} with ${kind}`);
    }
  }
});

test('the same calls with a good token get past authentication', async () => {
  for (const call of protectedCalls()) {
    const response = await t.app.inject({ ...call, headers: { authorization: `Bearer ${good}` } });
    assert.notEqual(response.statusCode, 401, `${call.url}: ${response.body}`);
  }
});
