import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { buildAuthTestApp, type AuthTestApp } from '../../../../test/support/auth-app.ts';

// Keeps docs/auth-api.md true: every `<!-- example: name [save=VAR:field] [vary=a,b] [repeat=N]
// [given=step] -->` is followed by a curl command (```sh) and the response it must get (```http).

interface Example {
  name: string;
  attrs: Map<string, string>;
  command: string;
  response: string;
}

const doc = readFileSync(new URL('../../../../docs/auth-api.md', import.meta.url), 'utf8');

function examples(markdown: string): Example[] {
  const found: Example[] = [];
  const marker = /<!-- example: (\S+)((?: \S+=\S+)*) -->/g;
  for (const match of markdown.matchAll(marker)) {
    const rest = markdown.slice((match.index ?? 0) + match[0].length);
    const sh = /```sh\n([\s\S]*?)```/.exec(rest);
    const http = /```http\n([\s\S]*?)```/.exec(rest);
    assert.ok(sh && http && sh.index < http.index, `example ${match[1]} needs a sh block then an http block`);
    const attrs = new Map((match[2] ?? '').trim().split(/\s+/).filter(Boolean).map((kv) => kv.split('=') as [string, string]));
    found.push({ name: match[1] as string, attrs, command: sh[1] as string, response: http[1] as string });
  }
  return found;
}

/** Just enough POSIX shell word splitting for our curl lines: quotes, escapes, $VAR, line continuations. */
function shellWords(command: string, vars: Record<string, string>): string[] {
  const words: string[] = [];
  let word: string | undefined;
  const text = command.replace(/\\\n/g, ' ');
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i] as string;
    const expand = () => {
      const name = /^[A-Z_][A-Z0-9_]*/.exec(text.slice(i + 1))?.[0];
      assert.ok(name && name in vars, `unset shell variable at ${text.slice(i, i + 20)}`);
      i += name.length;
      return vars[name] as string;
    };
    if (/\s/.test(c)) {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      word ??= '';
      for (i += 1; text[i] !== '"'; i += 1) {
        if (text[i] === '\\' && /["\\$]/.test(text[i + 1] ?? '')) word += text[(i += 1)];
        else if (text[i] === '$') word += expand();
        else word += text[i];
      }
    } else if (c === '$') {
      word = (word ?? '') + expand();
    } else {
      word = (word ?? '') + c;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

function curlRequest(command: string, vars: Record<string, string>) {
  const args = shellWords(command.trim(), vars);
  assert.equal(args.shift(), 'curl');
  let method: string | undefined;
  let url = '';
  let payload: string | undefined;
  const headers: Record<string, string> = {};
  while (args.length > 0) {
    const arg = args.shift() as string;
    if (arg === '-X') method = args.shift();
    else if (arg === '-H') {
      const [name, ...value] = (args.shift() as string).split(':');
      headers[(name as string).toLowerCase()] = value.join(':').trim();
    } else if (arg === '-d') payload = args.shift();
    else if (/^https?:\/\//.test(arg)) url = arg;
    else assert.ok(['-s', '-i'].includes(arg), `unsupported curl argument ${arg}`);
  }
  const { pathname, search } = new URL(url);
  return { method: (method ?? (payload === undefined ? 'GET' : 'POST')) as 'GET' | 'POST', url: pathname + search, headers, payload };
}

function parseHttp(text: string) {
  const [head = '', ...bodyParts] = text.split(/\n\n/);
  const [statusLine = '', ...headerLines] = head.split('\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1]);
  const headers = headerLines.filter((line) => line.trim() !== '').map((line) => {
    const at = line.indexOf(':');
    return [line.slice(0, at).toLowerCase(), line.slice(at + 1).trim()] as const;
  });
  const body = bodyParts.join('\n\n').trim();
  return { status, headers, body };
}

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

before(async () => {
  t = await buildAuthTestApp();
  await t.users.createUser({ id: 'alice', password: 'correct horse battery', name: 'Alice Kim', email: 'alice@example.com', tel: '+82-10-1234-5678' });
});
after(() => t.close());

/** Steps the doc describes in prose, done here the way the product will do them. */
const givens: Record<string, () => Promise<void>> = {
  'app-approved': () => t.websiteLogins.complete(vars.REQUEST_ID as string, 'alice'),
  'old-token': async () => {
    vars.OLD_TOKEN = (await t.jwt.issueAccessToken('alice')).token;
    t.advance(61 * 60_000);
  },
};

const all = examples(doc);

test('the doc has the examples this test expects', () => {
  assert.deepEqual(all.map((e) => e.name), [
    'login', 'refresh', 'wrong-password', 'malformed', 'expired-token', 'locked-out', 'jwks',
    'start', 'pending', 'result', 'read-twice', 'start-again', 'cancel', 'after-cancel',
  ]);
});

for (const example of all) {
  test(`docs/auth-api.md example "${example.name}"`, async () => {
    const given = example.attrs.get('given');
    if (given) await (givens[given] ?? assert.fail(`unknown given=${given}`))();
    const request = curlRequest(example.command, vars);
    const repeat = Number(example.attrs.get('repeat') ?? 1);
    let res = await t.app.inject(request);
    for (let i = 1; i < repeat; i += 1) res = await t.app.inject(request);

    const expected = parseHttp(example.response);
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
