import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { decodeJwt } from 'jose';
import { buildAuthTestApp, type AuthTestApp } from '../../../../test/support/auth-app.ts';

let t: AuthTestApp;
const alice = { id: 'alice', password: 'correct horse battery', name: 'Alice Kim', email: 'alice@example.com', tel: '+82-10-1234-5678' };

before(async () => {
  t = await buildAuthTestApp();
  await t.users.createUser(alice);
  await t.users.createUser({ id: 'bob', password: 'bob password 1', name: 'Bob' });
});
after(() => t.close());

const post = (url: string, payload: unknown, remoteAddress = '127.0.0.1') =>
  t.app.inject({ method: 'POST', url: `/v2/auth${url}`, payload: payload as object, remoteAddress });

test('auth-user answers exactly the authenticated user record', async () => {
  const res = await post('/auth-user', { id: 'alice', password: alice.password, userType: 'user' });
  assert.equal(res.statusCode, 200);
  const body = res.json();
  assert.deepEqual(Object.keys(body).sort(), ['email', 'name', 'telNo', 'token', 'userId']);
  assert.deepEqual({ ...body, token: undefined }, { token: undefined, userId: 'alice', name: 'Alice Kim', telNo: '+82-10-1234-5678', email: 'alice@example.com' });
  assert.deepEqual(await t.jwt.verifyAccessToken(body.token), { userId: 'alice' });
});

test('absent telNo and email are null', async () => {
  const res = await post('/auth-user', { id: 'bob', password: 'bob password 1' });
  assert.deepEqual({ ...res.json<object>(), token: 'x' }, { token: 'x', userId: 'bob', name: 'Bob', telNo: null, email: null });
});

test('a valid token of the same user refreshes in place of the password; auth_time is kept', async () => {
  const first = (await post('/auth-user', { id: 'alice', password: alice.password })).json();
  t.advance(30 * 60_000);
  const res = await post('/auth-user', { id: 'alice', token: first.token, password: '' });
  assert.equal(res.statusCode, 200);
  const refreshed = res.json();
  const [a, b] = [decodeJwt(first.token), decodeJwt(refreshed.token)];
  assert.equal(b.exp, (a.exp as number) + 30 * 60);
  assert.equal(b.auth_time, a.auth_time);
  assert.notEqual(b.jti, a.jti);
});

test('a token is refused for another id, when expired, or when the session is older than 7 days', async () => {
  const { token } = (await post('/auth-user', { id: 'alice', password: alice.password })).json();
  const other = await post('/auth-user', { id: 'bob', token });
  assert.equal(other.statusCode, 401);
  assert.equal(other.json().error.code, 'request.unauthorized');

  // Keep refreshing hourly for 7 days: allowed; beyond: password needed.
  let current = token as string;
  for (let minutes = 59; minutes <= 7 * 24 * 60; minutes += 59) {
    t.advance(59 * 60_000);
    const res = await post('/auth-user', { id: 'alice', token: current });
    assert.equal(res.statusCode, 200, `refresh after ${minutes} min`);
    current = res.json().token;
  }
  t.advance(59 * 60_000);
  const stale = await post('/auth-user', { id: 'alice', token: current });
  assert.equal(stale.statusCode, 401);
  assert.match(stale.json().error.message, /log in with the password/);

  t.advance(2 * 3600_000);
  const expired = await post('/auth-user', { id: 'alice', token: current });
  assert.deepEqual(expired.json(), { error: { code: 'request.unauthorized', message: 'Access token expired' } });
});

test('wrong password and unknown user: 401, same body', async () => {
  const wrong = await post('/auth-user', { id: 'alice', password: 'not the password' });
  const unknown = await post('/auth-user', { id: 'nobody', password: 'not the password' });
  assert.equal(wrong.statusCode, 401);
  assert.equal(unknown.statusCode, 401);
  assert.deepEqual(wrong.json(), { error: { code: 'request.unauthorized', message: 'Invalid id or password' } });
  assert.deepEqual(unknown.json(), wrong.json());
});

test('malformed bodies: 400 request.invalid', async () => {
  const cases: unknown[] = [
    {}, { password: 'x' }, { id: 42, password: 'x' }, { id: 'alice' }, { id: '', password: 'x' },
    { id: 'a'.repeat(129), password: 'x' }, { id: 'alice', password: 'p'.repeat(1025) }, { id: 'alice', password: 7 },
  ];
  for (const payload of cases) {
    const res = await post('/auth-user', payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.equal(res.json().error.code, 'request.invalid');
  }
  const notJson = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: '{"id":', headers: { 'content-type': 'application/json' } });
  assert.equal(notJson.statusCode, 400);
  const huge = await post('/auth-user', { id: 'alice', password: 'x'.repeat(20_000) });
  assert.equal(huge.statusCode, 413);
  assert.equal(huge.json().error.code, 'FST_ERR_CTP_BODY_TOO_LARGE');
});

test('5 failed passwords for an id in 15 minutes: 429 with Retry-After, even for the right password', async () => {
  const carol = { id: 'carol', password: 'carol password', name: 'Carol' };
  await t.users.createUser(carol);
  for (let i = 0; i < 5; i += 1) {
    assert.equal((await post('/auth-user', { id: 'carol', password: 'wrong guess' }, `10.1.0.${i}`)).statusCode, 401);
  }
  const locked = await post('/auth-user', { id: 'carol', password: carol.password }, '10.1.0.99');
  assert.equal(locked.statusCode, 429);
  assert.equal(locked.headers['retry-after'], '900');
  assert.equal(locked.json().error.code, 'auth.rate_limited');
  t.advance(15 * 60_000);
  assert.equal((await post('/auth-user', { id: 'carol', password: carol.password }, '10.1.0.99')).statusCode, 200);
});

test('30 failures from one address across ids slow it on those ids (429, Retry-After), never lock it: the right password of another account logs in', async () => {
  for (let i = 0; i < 30; i += 1) await post('/auth-user', { id: `spray-${i}`, password: 'guess guess' }, '192.0.2.66');
  assert.equal((await post('/auth-user', { id: 'alice', password: alice.password }, '192.0.2.66')).statusCode, 200);
  const res = await post('/auth-user', { id: 'spray-29', password: 'guess guess' }, '192.0.2.66');
  assert.equal(res.statusCode, 429);
  assert.equal(res.headers['retry-after'], '1');
  assert.equal((await post('/auth-user', { id: 'spray-29', password: 'guess guess' }, '192.0.2.67')).statusCode, 401);
});

test('website login: start, pending 401, completed record once, then 400', async () => {
  const started = await post('/auth-user-by-app', { requestId: 'https://shop.example/?', waitTime: 60 });
  assert.equal(started.statusCode, 200);
  const { requestId, waitTime } = started.json();
  assert.deepEqual(Object.keys(started.json()).sort(), ['requestId', 'waitTime']);
  assert.equal(waitTime, 60);
  assert.match(requestId, /^[A-Za-z0-9_-]{43}$/);

  const waiting = await post('/auth-user-result-by-app', { requestId, waitTime: 60 });
  assert.equal(waiting.statusCode, 401);
  assert.deepEqual(waiting.json(), { error: { code: '401', message: 'Wait for response from user app' } });

  await t.websiteLogins.complete(requestId, 'alice');
  const done = await post('/auth-user-result-by-app', { requestId });
  assert.equal(done.statusCode, 200);
  assert.deepEqual({ ...done.json<object>(), token: 'x' }, { token: 'x', userId: 'alice', name: 'Alice Kim', telNo: '+82-10-1234-5678', email: 'alice@example.com' });
  assert.deepEqual(await t.jwt.verifyAccessToken(done.json().token), { userId: 'alice' });

  const again = await post('/auth-user-result-by-app', { requestId });
  assert.equal(again.statusCode, 400);
  assert.deepEqual(again.json(), { error: { code: '400', message: 'Never requested or timeout' } });
});

test('website login: unknown, expired, cancelled and foreign-IP requests are "never requested"', async () => {
  const never = { error: { code: '400', message: 'Never requested or timeout' } };
  assert.deepEqual((await post('/auth-user-result-by-app', { requestId: 'no-such-request' })).json(), never);

  const expiring = (await post('/auth-user-by-app', { requestId: 'https://shop.example/?', waitTime: '5' })).json();
  assert.equal(expiring.waitTime, 5);
  t.advance(5_000);
  assert.deepEqual((await post('/auth-user-result-by-app', { requestId: expiring.requestId })).json(), never);

  const cancelled = (await post('/auth-user-by-app', { requestId: 'https://shop.example/?' })).json();
  assert.equal(cancelled.waitTime, 120);
  const res = await post('/cancel-auth-user-by-app', { requestId: cancelled.requestId, waitTime: 0 });
  assert.equal(res.statusCode, 200);
  assert.equal(res.body, '');
  assert.deepEqual((await post('/auth-user-result-by-app', { requestId: cancelled.requestId })).json(), never);

  const elsewhere = (await post('/auth-user-by-app', { requestId: 'https://shop.example/?' }, '203.0.113.9')).json();
  await t.websiteLogins.complete(elsewhere.requestId, 'alice');
  assert.deepEqual((await post('/auth-user-result-by-app', { requestId: elsewhere.requestId })).json(), never);
  assert.equal((await post('/auth-user-result-by-app', { requestId: elsewhere.requestId }, '203.0.113.9')).statusCode, 200);
});

test('website login: bad start bodies are 400 request.invalid', async () => {
  for (const payload of [{}, { requestId: '' }, { requestId: 'x', waitTime: 0 }, { requestId: 'x', waitTime: 601 }, { requestId: 'x', waitTime: 'soon' }, { requestId: 'x'.repeat(2049) }]) {
    const res = await post('/auth-user-by-app', payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.equal(res.json().error.code, 'request.invalid');
  }
  assert.equal((await post('/cancel-auth-user-by-app', {})).statusCode, 400);
});

test('website login result: a body naming no request gets docs/interfaces.md#authentication-api\'s 400 body exactly', async () => {
  const never = { error: { code: '400', message: 'Never requested or timeout' } };
  for (const payload of [{}, { waitTime: 60 }, { requestId: null }, { requestId: '' }, { requestId: 5 }, { requestId: 'x'.repeat(2049) }, [], ['requestId']]) {
    const res = await post('/auth-user-result-by-app', payload);
    assert.equal(res.statusCode, 400, JSON.stringify(payload));
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.deepEqual(res.json(), never, JSON.stringify(payload));
  }
  const empty = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user-result-by-app' });
  assert.deepEqual([empty.statusCode, empty.json()], [400, never]);
  const text = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user-result-by-app', headers: { 'content-type': 'application/json' }, payload: '"requestId"' });
  assert.deepEqual([text.statusCode, text.json()], [400, never]);
});

test('GET /.well-known/jwks.json serves the public signing key', async () => {
  const res = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers['cache-control'], 'public, max-age=300');
  const { keys } = res.json();
  assert.equal(keys.length, 1);
  assert.equal(keys[0].d, undefined);
  assert.deepEqual({ ...keys[0], x: 'x', kid: 'k' }, { kty: 'OKP', crv: 'Ed25519', x: 'x', kid: 'k', alg: 'EdDSA', use: 'sig' });
});
