import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startDidTestApp, type DidTestApp } from './support/did-app.ts';
import { assertSameShape } from './support/doc-examples.ts';
import { curlRequest, parseHttp, readShellExamples } from './support/curl-examples.ts';
import { addUser } from '../src/identity/add-user.ts';

// docs/did-api.md's curl examples, run as a reader's shell would run them: each command with this
// run's shell variables ($ADDRESS, $SECRET_KEY, $TOKEN, then what earlier examples saved), and an
// answer with the documented status and headers, the same keys at every level and the same fixed
// values. `<!-- did-example: NAME [save=VAR[:path]] -->` saves the answer (or a member of it) as $VAR.

const fixed = new Set([
  'alias', 'provider', 'kms', 'privateKeyHex', 'secretKey', 'verified', 'contentType', 'code', 'errorCode',
  'name', 'email', 'member', 'userId', 'telNo', 'type',
]);

/** Arrays that never change from run to run: `type` and `@context`, wherever they are. */
function assertFixedArrays(documented: unknown, actual: any, at = '$'): void {
  if (!documented || typeof documented !== 'object') return;
  for (const [key, value] of Object.entries(documented)) {
    if ((key === 'type' || key === '@context') && Array.isArray(value)) assert.deepEqual(actual?.[key], value, `${at}.${key}`);
    else assertFixedArrays(value, actual?.[key], `${at}.${key}`);
  }
}

/** `0.did` of `[{did: …}]`: dotted path, numbers index arrays. */
function member(value: any, path: string | undefined): unknown {
  return path ? path.split('.').reduce((at, key) => at?.[key], value) : value;
}

const examples = readShellExamples(readFileSync('docs/did-api.md', 'utf8'), 'did-example');
let d: DidTestApp;
before(async () => { d = await startDidTestApp(); });
after(async () => { await d?.close(); });

test('docs/did-api.md has the curl examples this test expects', () => {
  assert.deepEqual(examples.map((example) => example.name), [
    'issuers', 'verifiers', 'create-did', 'create-did-wrong-secret', 'create-vc', 'create-vc-foreign-issuer',
    'verify-vc', 'verify-vc-tampered', 'create-vp', 'verify-vp', 'auth-user-with-vp', 'auth-user-with-vp-replay',
  ]);
});

test('docs/did-api.md examples hold, run in order as a reader runs them', async () => {
  // The doc's setup: the user of docs/auth-api.md (`vixpay user add`), logged in.
  const password = 'correct horse battery';
  const user = await addUser({ users: d.t.platform.identity.users, createWalletAccount: () => d.t.platform.wallet.createAddress() }, {
    id: 'alice', password, name: 'Alice Kim', email: 'alice@example.com',
  });
  const login = await d.post('/v2/auth/auth-user', { id: 'alice', password });
  const vars: Record<string, string> = { ADDRESS: user.address, SECRET_KEY: user.secretKey, TOKEN: login.body.token };

  for (const example of examples) {
    assert.equal(example.output.lang, 'http', `${example.name}: the answer is an http block`);
    const request = curlRequest(example.command, vars);
    const live = await d.app.inject(request);
    const expected = parseHttp(example.output.text);
    assert.equal(live.statusCode, expected.status, `${example.name}: ${live.body.slice(0, 300)}`);
    for (const [name, value] of expected.headers) assert.equal(live.headers[name], value, `${example.name}: header ${name}`);
    const body = live.json();
    const documented = JSON.parse(expected.body);
    assertSameShape(documented, body, fixed, example.name);
    assertFixedArrays(documented, body, example.name);

    const save = example.attrs.get('save');
    if (save) {
      const [name, path] = save.split(':') as [string, string | undefined];
      const value = member(body, path);
      vars[name] = typeof value === 'string' ? value : JSON.stringify(value);
    }
    if (example.name === 'create-vc') {
      // docs/interfaces.md#did-vc-and-vp: the user info keys, `sub` and `id` = the holder DID.
      assert.deepEqual(body.credentialSubject, { ...documented.credentialSubject, sub: vars.DID, id: vars.DID });
    }
  }
});

test('the documented body limits hold', async () => {
  const big = await d.post('/v2/did/create-did', { alias: 'x'.repeat(17 * 1024), address: '0x', secretKey: 'x' });
  assert.deepEqual([big.status, big.body.error.code], [413, 'FST_ERR_CTP_BODY_TOO_LARGE']);
});
