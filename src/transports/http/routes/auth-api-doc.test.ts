import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { parseArgs } from 'node:util';
import { buildAuthTestApp, type AuthTestApp } from '../../../../test/support/auth-app.ts';
import { curlRequest, parseHttp, readShellExamples, shellWords, type ShellExample } from '../../../../test/support/curl-examples.ts';
import { addUser } from '../../../identity/add-user.ts';
import { userAddCommand } from '../../../cli/user-commands.ts';

// Keeps docs/auth-api.md true: every `<!-- example: name [save=VAR:field] [vary=a,b] [repeat=N]
// [given=step] -->` is followed by a command (```sh) and what it must print: a curl command and its
// response (```http), or the operator's `npx vixpay user add` and its output (```json).

const doc = readFileSync(new URL('../../../../docs/auth-api.md', import.meta.url), 'utf8');

/** Exact keys everywhere; "…" ends a prefix; keys named in `vary` only keep their type. */
function assertMatches(actual: unknown, expected: unknown, vary: Set<string>, at: string): void {
  if (typeof expected === 'string' && expected.endsWith('…')) {
    assert.equal(typeof actual, 'string', at);
    assert.ok((actual as string).startsWith(expected.slice(0, -1)), `${at}: ${String(actual)} should start with ${expected}`);
  } else if (Array.isArray(expected)) {
    assert.ok(Array.isArray(actual) && actual.length === expected.length, `${at}: array of ${expected.length}`);
    expected.forEach((item, i) => assertMatches((actual as unknown[])[i], item, vary, `${at}[${i}]`));
  } else if (expected !== null && typeof expected === 'object') {
    assert.ok(actual !== null && typeof actual === 'object', `${at}: object`);
    assert.deepEqual(Object.keys(actual as object).sort(), Object.keys(expected).sort(), `${at}: keys`);
    for (const [key, value] of Object.entries(expected)) {
      const got: unknown = (actual as Record<string, unknown>)[key];
      if (vary.has(key)) assert.equal(typeof got, typeof value, `${at}.${key}: type`);
      else assertMatches(got, value, vary, `${at}.${key}`);
    }
  } else {
    assert.equal(actual, expected, at);
  }
}

let t: AuthTestApp;
const vars: Record<string, string> = {};

before(async () => { t = await buildAuthTestApp(); });
after(() => t.close());

/** Steps the doc describes in prose, done here the way the product will do them. */
const givens: Record<string, () => Promise<void>> = {
  'app-approved': () => t.websiteLogins.complete(vars.REQUEST_ID as string, 'alice'),
  'old-token': async () => {
    vars.OLD_TOKEN = (await t.jwt.issueAccessToken('alice')).token;
    t.advance(61 * 60_000);
  },
};

const all = readShellExamples(doc, 'example');

test('the doc has the examples this test expects', () => {
  assert.deepEqual(all.map((e) => e.name), [
    'add-user', 'login', 'refresh', 'wrong-password', 'malformed', 'expired-token', 'locked-out', 'jwks',
    'start', 'pending', 'result', 'read-twice', 'no-request-id', 'start-again', 'cancel', 'after-cancel',
  ]);
});

/**
 * `npx vixpay user add …`: the options parsed as the CLI parses them (strictly, so a documented option
 * the command lacks fails), then what the command runs, with a stand-in wallet account.
 */
async function runUserAdd(example: ShellExample) {
  const words = shellWords(example.command.trim(), vars).map(String);
  assert.deepEqual(words.slice(0, 4), ['npx', 'vixpay', 'user', 'add']);
  const values: Record<string, unknown> = parseArgs({ args: words.slice(4), options: { ...userAddCommand.options, json: { type: 'boolean' } }, strict: true }).values;
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  const output = await addUser(
    { users: t.users, createWalletAccount: async () => ({ address: '0x4c3229092175dD1FA33Ba67f9a8C240211C3b8b4', secretKey: 'ab'.repeat(32), mnemonic: 'test '.repeat(11) + 'junk' }) },
    { id: text(values.id) ?? '', password: text(values.password) ?? '', name: text(values.name) ?? '', email: text(values.email), tel: text(values.tel) },
  );
  assert.equal(example.output.lang, 'json');
  const vary = new Set((example.attrs.get('vary') ?? '').split(',').filter(Boolean));
  assertMatches(output, JSON.parse(example.output.text), vary, 'output');
}

for (const example of all) {
  test(`docs/auth-api.md example "${example.name}"`, async () => {
    const given = example.attrs.get('given');
    if (given) await (givens[given] ?? assert.fail(`unknown given=${given}`))();
    if (example.command.trim().startsWith('npx vixpay')) {
      await runUserAdd(example);
      return;
    }
    assert.equal(example.output.lang, 'http', `${example.name}: a curl example shows its response in an http block`);
    const request = curlRequest(example.command, vars);
    const repeat = Number(example.attrs.get('repeat') ?? 1);
    let res = await t.app.inject(request);
    for (let i = 1; i < repeat; i += 1) res = await t.app.inject(request);

    const expected = parseHttp(example.output.text);
    assert.equal(res.statusCode, expected.status, `status; body ${res.body}`);
    for (const [name, value] of expected.headers) assert.equal(res.headers[name], value, `header ${name}`);
    const vary = new Set((example.attrs.get('vary') ?? '').split(',').filter(Boolean));
    if (expected.body === '') assert.equal(res.body, '');
    else assertMatches(res.json(), JSON.parse(expected.body), vary, 'body');

    const save = example.attrs.get('save');
    if (save) {
      const [name, field] = save.split(':') as [string, string];
      vars[name] = res.json()[field];
    }
  });
}
