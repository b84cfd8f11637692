import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SignJWT, base64url, calculateJwkThumbprint, decodeJwt, decodeProtectedHeader, generateKeyPair, jwtVerify, createLocalJWKSet } from 'jose';
import { DomainError } from '#shared/errors.ts';
import type { AccessTokenVerifier } from '../transports/http/auth-hook.ts';
import { createJwtService } from './jwt.ts';
import { generateSigningKeySet, loadOrCreateSigningKeys, signingKeyFileName } from './signing-keys.ts';

let now = Date.UTC(2025, 0, 1, 0, 0, 0);
const clock = () => now;
const keys = await generateSigningKeySet();
const jwt = createJwtService({ keys, clock, ttlSeconds: 3600 });
const nowSeconds = () => Math.floor(now / 1000);

const unauthorized = (e: unknown) => e instanceof DomainError && e.code === 'request.unauthorized';

/** Claims exactly like ours, for tokens built by hand with other algorithms or keys. */
const ourClaims = () => new SignJWT({})
  .setIssuer('vixpay').setAudience('vixpay').setSubject('alice')
  .setIssuedAt(nowSeconds()).setExpirationTime(nowSeconds() + 3600).setJti('j1');

test('issues an EdDSA token with iss, aud, sub, iat, exp (1 h), jti and our kid', async () => {
  const { token, claims } = await jwt.issueAccessToken('alice');
  const header = decodeProtectedHeader(token);
  assert.deepEqual(header, { alg: 'EdDSA', typ: 'JWT', kid: keys.active.kid });
  const payload = decodeJwt(token);
  assert.equal(payload.iss, 'vixpay');
  assert.equal(payload.aud, 'vixpay');
  assert.equal(payload.sub, 'alice');
  assert.equal(payload.iat, nowSeconds());
  assert.equal(payload.exp, nowSeconds() + 3600);
  assert.match(String(payload.jti), /^[0-9a-f-]{36}$/);
  assert.equal(claims.expiresAt, payload.exp);
  assert.notEqual((await jwt.issueAccessToken('alice')).claims.tokenId, claims.tokenId);
});

test('verifyAccessToken is an AccessTokenVerifier and accepts our own token', async () => {
  const verify: AccessTokenVerifier = jwt.verifyAccessToken;
  const { token } = await jwt.issueAccessToken('alice');
  assert.deepEqual(await verify(token), { userId: 'alice' });
});

test('the lifetime is configurable', async () => {
  const short = createJwtService({ keys, clock, ttlSeconds: 60 });
  const { token } = await short.issueAccessToken('alice');
  assert.equal(decodeJwt(token).exp, nowSeconds() + 60);
});

test('refuses alg "none"', async () => {
  const header = base64url.encode(JSON.stringify({ alg: 'none', typ: 'JWT', kid: keys.active.kid }));
  const payload = base64url.encode(JSON.stringify({ iss: 'vixpay', aud: 'vixpay', sub: 'alice', iat: nowSeconds(), exp: nowSeconds() + 3600, jti: 'j' }));
  await assert.rejects(jwt.verifyAccessToken(`${header}.${payload}.`), unauthorized);
});

test('refuses HS256, even keyed with our public key bytes', async () => {
  const secret = new TextEncoder().encode(JSON.stringify(keys.active.publicJwk));
  const token = await ourClaims().setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: keys.active.kid }).sign(secret);
  await assert.rejects(jwt.verifyAccessToken(token), unauthorized);
});

test('refuses a token signed by another key, whatever kid it names', async () => {
  const other = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const withOurKid = await ourClaims().setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: keys.active.kid }).sign(other.privateKey);
  const withoutKid = await ourClaims().setProtectedHeader({ alg: 'EdDSA', typ: 'JWT' }).sign(other.privateKey);
  const es256 = await generateKeyPair('ES256');
  const otherAlg = await ourClaims().setProtectedHeader({ alg: 'ES256', typ: 'JWT', kid: keys.active.kid }).sign(es256.privateKey);
  for (const token of [withOurKid, withoutKid, otherAlg]) await assert.rejects(jwt.verifyAccessToken(token), unauthorized);
});

test('refuses an expired token and says so', async () => {
  const { token } = await jwt.issueAccessToken('alice');
  const saved = now;
  now += 3600_000 + 6_000; // past exp and the 5 s tolerance
  try {
    await assert.rejects(jwt.verifyAccessToken(token), (e: unknown) => unauthorized(e) && (e as Error).message === 'Access token expired');
  } finally {
    now = saved;
  }
});

test('refuses a token whose payload was changed', async () => {
  const { token } = await jwt.issueAccessToken('alice');
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const changed = { ...JSON.parse(new TextDecoder().decode(base64url.decode(payload))), sub: 'mallory' };
  const forged = `${header}.${base64url.encode(JSON.stringify(changed))}.${signature}`;
  await assert.rejects(jwt.verifyAccessToken(forged), unauthorized);
});

test('refuses our own signature over another issuer or audience, and garbage', async () => {
  const sign = (iss: string, aud: string) => new SignJWT({}).setIssuer(iss).setAudience(aud).setSubject('alice')
    .setIssuedAt(nowSeconds()).setExpirationTime(nowSeconds() + 60).setJti('j')
    .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', kid: keys.active.kid }).sign(keys.active.privateKey);
  await assert.rejects(jwt.verifyAccessToken(await sign('someone-else', 'vixpay')), unauthorized);
  await assert.rejects(jwt.verifyAccessToken(await sign('vixpay', 'someone-else')), unauthorized);
  await assert.rejects(jwt.verifyAccessToken('not.a.jwt'), unauthorized);
  await assert.rejects(jwt.verifyAccessToken(''), unauthorized);
});

test('jwks() serves the public key only, and it verifies our tokens', async () => {
  const set = jwt.jwks();
  assert.equal(set.keys.length, 1);
  const [key] = set.keys;
  assert.deepEqual(Object.keys(key ?? {}).sort(), ['alg', 'crv', 'kid', 'kty', 'use', 'x']);
  const { token } = await jwt.issueAccessToken('alice');
  const { payload } = await jwtVerify(token, createLocalJWKSet(set), { issuer: 'vixpay', audience: 'vixpay', currentDate: new Date(now) });
  assert.equal(payload.sub, 'alice');
});

test('the key file is created once with mode 0600 and reused, kid = JWK thumbprint', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-jwt-'));
  try {
    const file = path.join(dir, 'nested', signingKeyFileName);
    const first = await loadOrCreateSigningKeys(file);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const again = await loadOrCreateSigningKeys(file);
    assert.equal(again.active.kid, first.active.kid);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(stored.keys[0].kid, first.active.kid);
    assert.equal(first.active.kid, await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: stored.keys[0].x }, 'sha256'));
    const { token } = await createJwtService({ keys: first, clock }).issueAccessToken('bob');
    assert.deepEqual(await createJwtService({ keys: again, clock }).verifyAccessToken(token), { userId: 'bob' });
    const racing = await Promise.all([1, 2, 3].map(() => loadOrCreateSigningKeys(path.join(dir, 'race.json'))));
    assert.equal(new Set(racing.map((k) => k.active.kid)).size, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
