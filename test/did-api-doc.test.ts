import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startDidTestApp, type DidTestApp } from './support/did-app.ts';
import { assertSameShape } from './support/doc-examples.ts';

// docs/did-api.md's examples, replayed live: the documented request with this run's address, keys
// and DIDs put in, and an answer with the documented status, the same keys at every level and the
// same fixed values.

interface HttpExample {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: any;
  status: number;
  response: any;
}

function readHttpExamples(file: string): Map<string, HttpExample> {
  const examples = new Map<string, HttpExample>();
  const text = readFileSync(file, 'utf8');
  for (const match of text.matchAll(/<!-- did-example: ([\w-]+) -->\n```http\n([\s\S]*?)\n```\n\n```http\n([\s\S]*?)\n```/g)) {
    const [head, body] = splitHttp(match[2]!);
    const [requestLine, ...headerLines] = head.split('\n');
    const [method, path] = requestLine!.split(' ');
    const headers = Object.fromEntries(headerLines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
    const [responseHead, responseBody] = splitHttp(match[3]!);
    examples.set(match[1]!, {
      method: method!, path: path!, headers, body: body ? JSON.parse(body) : undefined,
      status: Number(responseHead.split(' ')[1]), response: JSON.parse(responseBody!),
    });
  }
  return examples;
}

function splitHttp(block: string): [string, string | undefined] {
  const at = block.indexOf('\n\n');
  return at < 0 ? [block, undefined] : [block.slice(0, at), block.slice(at + 2)];
}

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

let d: DidTestApp;
const examples = readHttpExamples('docs/did-api.md');
before(async () => { d = await startDidTestApp(); });
after(async () => { await d?.close(); });

async function replay(name: string, body?: unknown, headers: Record<string, string> = {}) {
  const example = examples.get(name);
  assert.ok(example, `example ${name} is documented`);
  if (example.body !== undefined) assert.deepEqual(Object.keys(body as object).sort(), Object.keys(example.body).sort(), `${name}: request fields`);
  const live = example.method === 'GET' ? await d.get(example.path) : await d.post(example.path, body, headers);
  assert.equal(live.status, example.status, `${name}: ${JSON.stringify(live.body).slice(0, 300)}`);
  assertSameShape(example.response, live.body, fixed);
  assertFixedArrays(example.response, live.body);
  return { example, live: live.body };
}

test('docs/did-api.md examples hold', async () => {
  assert.equal(examples.size, 12);
  const user = await d.newUser('alice');
  const bearer = { authorization: `Bearer ${user.token}` };
  const issuer = (await replay('issuers')).live[0].did;
  const verifier = (await replay('verifiers')).live[0].did;

  const doc = (name: string) => examples.get(name)!.body;
  const record = (await replay('create-did', { ...doc('create-did'), address: user.address, secretKey: user.secretKey })).live;
  await replay('create-did-wrong-secret', { ...doc('create-did-wrong-secret'), address: user.address });

  const vc = (await replay('create-vc', { ...doc('create-vc'), holder: record.did, issuer }, bearer)).live;
  assert.deepEqual(vc.credentialSubject, { ...doc('create-vc').userInfo, id: record.did });
  await replay('create-vc-foreign-issuer', { ...doc('create-vc-foreign-issuer'), holder: record.did, issuer: verifier }, bearer);

  await replay('verify-vc', vc);
  const tampered = doc('verify-vc-tampered');
  await replay('verify-vc-tampered', { ...vc, credentialSubject: { ...vc.credentialSubject, name: tampered.credentialSubject.name } });

  const vp = (await replay('create-vp', { ...doc('create-vp'), holder: record.did, verifier, credentials: [vc] })).live;
  await replay('verify-vp', vp);
  await replay('auth-user-with-vp', { vp });
  await replay('auth-user-with-vp-replay', { vp });
});

test('the documented body limits hold', async () => {
  const big = await d.post('/v2/did/create-did', { alias: 'x'.repeat(17 * 1024), address: '0x', secretKey: 'x' });
  assert.deepEqual([big.status, big.body.error.code], [413, 'FST_ERR_CTP_BODY_TOO_LARGE']);
});
