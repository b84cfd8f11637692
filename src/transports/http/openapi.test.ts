import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { startTestPlatform, type TestPlatform } from '../../../test/support/platform.ts';
import { readDocExamples } from '../../../test/support/doc-examples.ts';
import { curlRequest, parseHttp, readShellExamples } from '../../../test/support/curl-examples.ts';
import { readyUrls } from '../ready-banner.ts';

// GET /openapi.json against the running routes and the guides: every route is in the document,
// every JSON request of docs/*.md validates against its route's request schema (and the few
// examples that show a refused request are refused by it), and /docs serves Swagger UI itself.

/** Routes left out of the document on purpose: the document itself and Swagger UI's pages and assets. */
const undocumented = [/^\/openapi\.json$/, /^\/docs(\/.*)?$/];

/** Examples whose request the server refuses before running it, as the guide shows: the document refuses them too. */
const refusedExamples = new Set(['auth-api.md#malformed', 'auth-api.md#no-request-id', 'token-api.md#unknown-method', 'token-api.md#bad-params']);
/** Not JSON at all (the parse-error example), so no schema applies. */
const notJson = new Set(['token-api.md#parse-error']);

let t: TestPlatform;
let document: any;
before(async () => {
  t = await startTestPlatform();
  const response = await t.app.inject('/openapi.json');
  assert.equal(response.statusCode, 200);
  document = response.json();
});
after(async () => { await t?.stop(); });

/** Method and path of every registered route, read from Fastify's route tree (HEAD, added for each GET, left out). */
function registeredRoutes(tree: string): string[] {
  const routes: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    const depth = (match[1] as string).length / 4;
    stack.length = depth;
    const path = (stack[depth - 1] ?? '') + (match[2] as string);
    stack.push(path);
    for (const method of (match[3] ?? '').split(', ').filter((m) => m && m !== 'HEAD')) routes.push(`${method} ${path}`);
  }
  return routes;
}

/** The document's path template of a request path (`/v1/ipfs/Qm…/get` → `/v1/ipfs/{cid}/get`). */
function templateOf(path: string): string | undefined {
  const templates = Object.keys(document.paths);
  const matches = (template: string) => new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path);
  return templates.find((template) => template === path) ?? templates.find(matches);
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
function requestSchema(method: string, path: string): object {
  const template = templateOf(path);
  assert.ok(template, `${method} ${path} is in the document`);
  const operation = document.paths[template][method.toLowerCase()];
  assert.ok(operation, `${method} ${template} is in the document`);
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  assert.ok(schema, `${method} ${template} documents a JSON body`);
  return schema;
}

function checkExample(name: string, method: string, path: string, body: unknown): void {
  const validate = ajv.compile(requestSchema(method, path));
  const valid = validate(body);
  if (refusedExamples.has(name)) assert.equal(valid, false, `${name}: the document refuses it, as the server does`);
  else assert.ok(valid, `${name}: ${ajv.errorsText(validate.errors)}`);
}

test('the document is OpenAPI 3.1', () => {
  assert.equal(document.openapi, '3.1.0');
  assert.ok(document.info.title && document.info.version);
});

test('every registered route is in the document', () => {
  const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false }));
  assert.ok(routes.length > 30, `routes read from the tree: ${routes.join(', ')}`);
  const missing = routes
    .filter((route) => !undocumented.some((pattern) => pattern.test(route.split(' ')[1] as string)))
    .filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return !document.paths[path.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()];
    });
  assert.deepEqual(missing, []);
});

test('the request schemas are the zod schemas the routes parse with', () => {
  const pay = requestSchema('POST', '/v1/ict/pay') as any;
  assert.deepEqual(pay.required, ['tokenName', 'amount', 'myAddress', 'password']);
  assert.equal(pay.additionalProperties, false);
  const token = requestSchema('POST', '/token') as any;
  const methods = token.anyOf[0].oneOf.map((request: any) => request.properties.method.enum?.[0] ?? request.properties.method.const);
  assert.deepEqual(methods.sort(), ['createAddress', 'createToken', 'getBalance', 'getTokenInfo', 'getTransferStatus', 'importAddress', 'net_getTempKey', 'signData', 'transfer']);
  const add = document.paths['/v1/ipfs/add'].post;
  assert.ok(add.requestBody.content['multipart/form-data'].schema.properties.file);
  assert.ok(add.parameters.some((p: any) => p.in === 'query' && p.name === 'cid-version'));
});

test('every JSON request example of the JSON-RPC and pay guides validates against the document', () => {
  const endpoints: Record<string, string> = { 'token-api.md': '/token', 'block-api.md': '/block', 'chain-api.md': '/v1/chain', 'pay-api.md': '/v1/ict/pay' };
  let checked = 0;
  for (const [file, path] of Object.entries(endpoints)) {
    for (const [name, example] of readDocExamples(`docs/${file}`)) {
      if (notJson.has(`${file}#${name}`)) continue;
      checkExample(`${file}#${name}`, 'POST', path, example.request);
      checked += 1;
    }
  }
  assert.ok(checked >= 17, `examples checked: ${checked}`);
});

test('every curl example of the auth and DID guides is a documented route, its JSON body valid', () => {
  let checked = 0;
  for (const [file, marker] of [['auth-api.md', 'example'], ['did-api.md', 'did-example']] as const) {
    // Shell variables: what earlier examples saved from their documented answers, else a stand-in.
    const saved: Record<string, string> = {};
    const vars = new Proxy(saved, { has: () => true, get: (target, name: string) => target[name] ?? `stand-in-${name}` });
    for (const example of readShellExamples(readFileSync(`docs/${file}`, 'utf8'), marker)) {
      if (!example.command.trim().startsWith('curl') && !example.command.includes('| curl') && !example.command.includes('|\n  curl')) continue;
      const request = curlRequest(example.command, vars);
      const path = request.url.split('?')[0] as string;
      if (request.payload !== undefined) checkExample(`${file}#${example.name}`, request.method, path, JSON.parse(request.payload));
      else assert.ok(document.paths[templateOf(path) ?? '']?.[request.method.toLowerCase()], `${example.name}: ${request.method} ${path} is documented`);
      checked += 1;
      const save = example.attrs.get('save');
      if (save && example.output.lang === 'http') {
        const [name, member] = save.split(':') as [string, string | undefined];
        const answer = JSON.parse(parseHttp(example.output.text).body);
        const value: unknown = member ? member.split('.').reduce((at: any, key) => at?.[key], answer) : answer;
        saved[name] = typeof value === 'string' ? value : JSON.stringify(value);
      }
    }
  }
  assert.ok(checked >= 25, `examples checked: ${checked}`);
});

test('every IPFS request of docs/ipfs-api.md is a documented route with documented query options', () => {
  const urls = [...readFileSync('docs/ipfs-api.md', 'utf8').matchAll(/"\$API_URL(\/v1\/ipfs\/[^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(urls.length >= 10, `requests found: ${urls.length}`);
  for (const url of urls) {
    const { pathname, searchParams } = new URL(url, 'http://localhost');
    const template = templateOf(pathname);
    const operation = template && (document.paths[template].get ?? document.paths[template].post);
    assert.ok(operation, `${pathname} is documented`);
    const names = new Set((operation.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name));
    for (const key of searchParams.keys()) assert.ok(names.has(key), `${url}: query option ${key} is documented`);
  }
});

test('/docs is Swagger UI, its scripts and styles served from here', async () => {
  const page = await t.app.inject('/docs/');
  assert.equal(page.statusCode, 200);
  assert.match(String(page.headers['content-type']), /^text\/html/);
  const assets = [...page.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] as string);
  assert.ok(assets.some((a) => a.endsWith('.js')) && assets.some((a) => a.endsWith('.css')), assets.join(', '));
  for (const asset of assets) {
    assert.ok(!/^(https?:)?\/\//.test(asset), `${asset} is not loaded from another server`);
    const response = await t.app.inject(new URL(asset, 'http://localhost/docs/').pathname);
    assert.equal(response.statusCode, 200, asset);
  }
  const initializer = await t.app.inject('/docs/static/swagger-initializer.js');
  assert.equal(initializer.statusCode, 200);
  const json = await t.app.inject('/docs/json');
  assert.deepEqual(json.json().paths, document.paths);
});

test('every registered route lies under a URL of the ready banner and the ready log line', () => {
  const lines = readyUrls(t.config, { httpPort: 8080, grpcPort: 50051 });
  const bases = lines.flatMap(([, value]) => [...value.matchAll(/http:\/\/[^/\s]+(\/\S*)/g)].map((m) => m[1] as string));
  const covers = (base: string, path: string) => {
    const pattern = base.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+');
    return new RegExp(`^${pattern}(/|$)`).test(path);
  };
  const routes = registeredRoutes(t.app.printRoutes({ commonPrefix: false })).map((route) => route.split(' ')[1] as string);
  const uncovered = [...new Set(routes)].filter((path) => path !== '/' && path !== '*' && !bases.some((base) => covers(base, path)));
  assert.deepEqual(uncovered, [], `routes no banner line names: add them to readyUrls (src/transports/ready-banner.ts)`);
  // And no banner line names a route that is not there.
  const unserved = bases.filter((base) => !routes.some((path) => covers(base, path.replace(/:(\w+)/g, '{$1}')) || covers(base, path)));
  assert.deepEqual(unserved, []);
});
