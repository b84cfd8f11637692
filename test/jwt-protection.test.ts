import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { SignJWT, UnsecuredJWT } from 'jose';
import { createJwtService } from '../src/identity/jwt.ts';
import { generateSigningKeySet, signingKeyFileName } from '../src/identity/signing-keys.ts';
import { openSigningKeys } from '../src/identity/signing-key-store.ts';
import { createSigningKeyRepository } from '../src/store/signing-key-repository.ts';
import { addUser } from '../src/identity/add-user.ts';
import { embeddedBackendVersion } from '../src/ipfs/embedded-backend.ts';
import { defaultAddOptions } from '../src/ipfs/ipfs-backend.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';

// Every JWT-protected HTTP API refuses the same bad tokens. (The payment server's metadata check is
// in test/payments-edges.test.ts.)
let t: TestPlatform;
const bad: Record<string, string> = {};
let good: string;
let erinAddress: string;
const payReceiver = '0x000000000000000000000000000000000000dEaD';
const emptyFile = 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH';

before(async () => {
  t = await startTestPlatform({ env: { PAY_RECEIVER_ADDRESS: payReceiver } });
  erinAddress = (await addUser({ users: t.platform.identity.users, createWalletAccount: () => t.platform.wallet.createAddress() },
    { id: 'erin', password: 'erin password', name: 'Erin' })).address;
  await t.platform.wallet.mint('ethereum', { to: erinAddress, amount: '5' });
  assert.equal((await t.platform.ipfs.addEntries((async function* () { yield { kind: 'file' as const, path: '', content: (async function* () {})() }; })(), defaultAddOptions())).cid, emptyFile);
  // The platform's own keys (in its database since 0011-fleet).
  const keys = await openSigningKeys({
    repository: createSigningKeyRepository(t.platform.store.db), vault: t.platform.vault, clock: Date.now, ttlSeconds: 3600,
    importFile: path.join(t.dataDir, signingKeyFileName),
  });
  keys.close();
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

/** REST pay answers in the token API's shape `{resultCode, resultMessage, resultData}`; the others `{error: {code, message}}`. */
const payRefusal = (message: string) => ({ resultCode: '401', resultMessage: message, resultData: '' });
const apiRefusal = (message: string) => ({ error: { code: 'request.unauthorized', message } });
/** What a refused caller is told, by what was wrong with its token. */
const refusalMessage = (kind: string) =>
  kind === 'missing' ? 'Authorization: Bearer <ACCESS_TOKEN> required' : kind === 'expired' ? 'Access token expired' : 'Invalid access token';

/** Each protected call, what it answers without a valid token, and what a user gets with erin's good one. */
const protectedCalls = () => [
  {
    method: 'POST' as const, url: '/v1/ict/pay', payload: { tokenName: 'VIXP', amount: '1', myAddress: erinAddress, password: 'erin password' },
    refusal: payRefusal,
    async granted(status: number, body: any) {
      assert.equal(status, 200, JSON.stringify(body));
      assert.match(body.resultData.transactionId, /^0x[0-9a-f]{64}$/);
      assert.deepEqual(body, {
        resultCode: '200', resultMessage: 'Success',
        resultData: { transactionId: body.resultData.transactionId, status: 'confirmed', tokenName: 'VIXP', amount: '1', fromAddress: erinAddress, toAddress: payReceiver, network: 'ethereum' },
      });
      assert.equal((await t.platform.wallet.getBalance('ethereum', { address: erinAddress })).balance, '4');
    },
  },
  {
    // Authenticated, then validated: an issuer that is no DID is the caller's mistake (400), not a refusal.
    method: 'POST' as const, url: '/v2/did/create-vc', payload: { holder: 'did:ethr:0x0000000000000000000000000000000000000001', issuer: 'x', userInfo: { a: 1 } },
    refusal: apiRefusal,
    granted(status: number, body: any) {
      assert.equal(status, 400, JSON.stringify(body));
      assert.deepEqual(body, { error: { code: 'request.invalid', message: 'issuer: not a DID' } });
    },
  },
  {
    method: 'GET' as const, url: '/v1/ipfs/id', refusal: apiRefusal,
    async granted(status: number, body: any) {
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body, { id: await t.platform.ipfs.id() });
      assert.match(body.id, /^12D3KooW/);
    },
  },
  {
    method: 'GET' as const, url: '/v1/ipfs/version', refusal: apiRefusal,
    granted(status: number, body: any) {
      assert.equal(status, 200, JSON.stringify(body));
      assert.deepEqual(body, { version: embeddedBackendVersion });
    },
  },
  {
    method: 'GET' as const, url: `/v1/ipfs/${emptyFile}`, refusal: apiRefusal,
    granted(status: number, body: string) {
      assert.equal(status, 200, body);
      assert.equal(body, '');
    },
  },
];

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
};

test('alg none, HS256, a foreign key, an expired or changed token, garbage and no token: 401 everywhere', async () => {
  for (const { refusal, granted: _granted, ...call } of protectedCalls()) {
    for (const [kind, token] of [...Object.entries(bad), ['missing', ''] as const]) {
      const response = await t.app.inject({ ...call, headers: token ? { authorization: `Bearer ${token}` } : {} });
      assert.equal(response.statusCode, 401, `${call.url} with ${kind}: ${response.body}`);
      assert.deepEqual(parsed(response.body), refusal(refusalMessage(kind)), `${call.url} with ${kind}`);
    }
  }
  assert.equal((await t.platform.wallet.getBalance('ethereum', { address: erinAddress })).balance, '5', 'no refused pay moved tokens');
});

test('the same calls with a good token do what they do', async () => {
  for (const { refusal: _refusal, granted, ...call } of protectedCalls()) {
    const response = await t.app.inject({ ...call, headers: { authorization: `Bearer ${good}` } });
    await granted(response.statusCode, parsed(response.body) as never);
  }
});
