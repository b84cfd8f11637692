import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { exporter } from 'ipfs-unixfs-exporter';
import { importer, type ImportCandidate } from 'ipfs-unixfs-importer';
import { defaultAddOptions } from './ipfs-backend.ts';
import { assertCode, entries, file, ipfsBackendContract } from '../../test/support/ipfs-backend-contract.ts';
import { createKuboBackend } from './kubo-backend.ts';

// 1. The real thing, when IPFS_API_URL names a Kubo node that answers.
const apiUrl = process.env.IPFS_API_URL;
ipfsBackendContract('Kubo (IPFS_API_URL)', async () => {
  if (!apiUrl) return 'IPFS_API_URL is not set: no Kubo node to run the contract against';
  try {
    const response = await fetch(`${apiUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '')}/api/v0/version`, { method: 'POST', signal: AbortSignal.timeout(3000) });
    if (!response.ok) return `Kubo at ${apiUrl} answered ${response.status} to /api/v0/version`;
  } catch (error) {
    return `Kubo at ${apiUrl} does not answer (${(error as Error).message})`;
  }
  return createKuboBackend({ apiUrl, timeoutMs: 10_000 });
});

// 2. The adapter's HTTP plumbing (multipart out, NDJSON in, errors) against a stand-in for Kubo's
//    RPC. The stand-in shares no code with what it checks: it reads multipart bodies with its own
//    few lines below and builds DAGs with ipfs-unixfs-importer's own `unixfs-v0-2015` profile
//    (IPIP-499, Kubo's default), not our importer options. Before it stands in for Kubo it is
//    itself checked against fixed request bodies as Kubo's clients send them and the CIDs Kubo
//    answers for them ('the stand-in answers like Kubo' below).
let fake: http.Server;
let fakeUrl = '';
before(async () => {
  fake = http.createServer((request, response) => {
    fakeKubo(request, response).catch((error: Error) => {
      const notFound = error.name === 'NotFoundError';
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ Message: notFound ? `block was not found locally (offline): ${error.message}` : error.message, Code: 0, Type: 'error' }));
    });
  });
  fake.listen(0, '127.0.0.1');
  await new Promise((resolve) => fake.once('listening', resolve));
  fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
});
after(() => fake.close());

/** A POST to the stand-in's `add` with a raw body; its NDJSON answer, parsed. */
async function postAdd(query: string, contentType: string, body: string): Promise<Array<{ Name: string; Hash: string; Size: string }>> {
  const response = await fetch(`${fakeUrl}/api/v0/add?${query}`, { method: 'POST', headers: { 'content-type': contentType }, body });
  assert.equal(response.status, 200, await response.clone().text());
  assert.equal(response.headers.get('content-type'), 'application/x-ndjson');
  return (await response.text()).trim().split('\n').map((line) => JSON.parse(line));
}

describe('the stand-in answers like Kubo', () => {
  // Bodies byte for byte as the clients write them: curl's `-F file=@hello.txt`, and Kubo's own Go
  // client (boxo files.MultiFileReader over Go's mime/multipart: part name "file", the path
  // url.QueryEscape'd in filename, application/x-directory parts for directories). The CIDs are
  // Kubo's (test/sharness/t0040-add-and-cat.sh, test/cli/cid_profiles_test.go, the docs); Size is
  // the DAG size of those blocks (a 12-byte file: 2 bytes of PBNode around 18 of UnixFS data).
  const curlBoundary = '------------------------d74496d66958873e';
  const curlBody = (name: string, content: string) =>
    `--${curlBoundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${curlBoundary}--\r\n`;
  const goBoundary = '5e7b4b9ba6f8e0f8ff33f4d3b8b7b1c97e2f1bde9b96a0c0a8e0d2b0f3b7';
  const goPart = (filename: string, type: string, content = '') =>
    `--${goBoundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n${content}`;
  const goBody = (...parts: string[]) => `${parts.join('\r\n')}\r\n--${goBoundary}--\r\n`;

  test('curl -F file=@hello.txt: one line with Kubo\'s CID', async () => {
    const lines = await postAdd('chunker=size-262144&pin=false', `multipart/form-data; boundary=${curlBoundary}`, curlBody('hello.txt', 'hello world\n'));
    assert.deepEqual(lines, [{ Name: 'hello.txt', Hash: 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o', Size: '20' }]);
  });

  test('an empty file, and --cid-version=1 (raw leaves)', async () => {
    const contentType = `multipart/form-data; boundary=${curlBoundary}`;
    assert.deepEqual(await postAdd('chunker=size-262144&pin=false', contentType, curlBody('empty', '')), [
      { Name: 'empty', Hash: 'QmbFMke1KXqnYyBBWxB74N4c5SBnJMVAiMNRcGu6x1AwQH', Size: '6' },
    ]);
    assert.deepEqual(await postAdd('chunker=size-262144&pin=false&cid-version=1&raw-leaves=true', contentType, curlBody('a', 'hello world')), [
      { Name: 'a', Hash: 'bafkreifzjut3te2nhyekklss27nh3k72ysco7y32koao5eei66wof36n5e', Size: '11' },
    ]);
  });

  test('ipfs add -r planets (Go client body): every entry with Kubo\'s CID, the directory last', async () => {
    const body = goBody(
      goPart('planets', 'application/x-directory'),
      goPart('planets%2Fmars.txt', 'application/octet-stream', 'Hello Mars!\n'),
      goPart('planets%2Fvenus.txt', 'application/octet-stream', 'Hello Venus!\n'),
    );
    const lines = await postAdd('chunker=size-262144&pin=false', `multipart/form-data; boundary=${goBoundary}`, body);
    assert.deepEqual(lines.map(({ Name, Hash }) => ({ Name, Hash })), [
      { Name: 'planets/mars.txt', Hash: 'QmPrrHqJzto9m7SyiRzarwkqPcCSsKR2EB1AyqJfe8L8tN' },
      { Name: 'planets/venus.txt', Hash: 'QmU5kp3BH3B8tnWUU2Pikdb2maksBNkb92FHRr56hyghh4' },
      { Name: 'planets', Hash: 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY' },
    ]);
  });

  test('ipfs add -r of nested directories (Go client body, depth-first)', async () => {
    const body = goBody(
      goPart('moons', 'application/x-directory'),
      goPart('moons%2Fjupiter', 'application/x-directory'),
      goPart('moons%2Fjupiter%2Feuropa.txt', 'application/octet-stream', 'Hello Europa!\n'),
      goPart('moons%2Fmercury.txt', 'application/octet-stream', 'hey youre no moon!\n'),
      goPart('moons%2Fsaturn', 'application/x-directory'),
      goPart('moons%2Fsaturn%2Ftitan.txt', 'application/octet-stream', 'Hello Titan!\n'),
    );
    const lines = await postAdd('chunker=size-262144&pin=false', `multipart/form-data; boundary=${goBoundary}`, body);
    const cids = Object.fromEntries(lines.map(({ Name, Hash }) => [Name, Hash]));
    assert.equal(cids.moons, 'QmVKvomp91nMih5j6hYBA8KjbiaYvEetU2Q7KvtZkLe9nQ');
    assert.equal(cids['moons/jupiter'], 'QmS5mZddhFPLWFX3w6FzAy9QxyYkaxvUpsWCtZ3r7jub9J');
    assert.equal(lines.at(-1)?.Name, 'moons');
  });
});

// The adapter uploads through kubo-rpc-client, whose body is the Go client's (above) byte for byte
// except the part names: `dir`, `file-1`, `file-2`… where Go writes `file` for every part. Kubo
// reads each part's path from its file name and its kind from its Content-Type, never its name.
describe('the adapter sends what Kubo\'s own clients send', () => {
  test('query and multipart body, byte for byte (boundary aside)', async () => {
    const ipfs = createKuboBackend({ apiUrl: fakeUrl });
    const { cid } = await ipfs.addEntries(entries({ kind: 'directory', path: 'planets' }, file('planets/mars.txt', 'Hello Mars!\n'), file('planets/venus.txt', 'Hello Venus!\n')), defaultAddOptions());
    assert.equal(cid, 'QmWSgS32xQEcXMeqd3YPJLrNBLSdsfYCep2U7CFkyrjXwY');
    const sent = lastAdd;
    assert.ok(sent, 'the adapter called add');
    assert.deepEqual(Object.fromEntries(sent.query), {
      'cid-version': '0', 'raw-leaves': 'false', chunker: 'size-262144', hash: 'sha2-256', 'wrap-with-directory': 'true',
      'only-hash': 'false', pin: 'false', progress: 'false', 'stream-channels': 'true',
    });
    const boundary = /^multipart\/form-data; boundary=(\S+)$/.exec(sent.contentType)?.[1];
    assert.ok(boundary, sent.contentType);
    const expected =
      '--B\r\nContent-Disposition: form-data; name="dir"; filename="planets"\r\nContent-Type: application/x-directory\r\n\r\n' +
      '\r\n--B\r\nContent-Disposition: form-data; name="file-1"; filename="planets%2Fmars.txt"\r\nContent-Type: application/octet-stream\r\n\r\nHello Mars!\n' +
      '\r\n--B\r\nContent-Disposition: form-data; name="file-2"; filename="planets%2Fvenus.txt"\r\nContent-Type: application/octet-stream\r\n\r\nHello Venus!\n' +
      '\r\n--B--\r\n';
    assert.equal(sent.body.toString('latin1').replaceAll(boundary, 'B'), expected);
  });
});

ipfsBackendContract('Kubo adapter over a stand-in RPC', async () => createKuboBackend({ apiUrl: `${fakeUrl}/api/v0`, timeoutMs: 5_000 }));

describe('Kubo adapter specifics', () => {
  test('parts must come depth-first, as Kubo requires', async () => {
    const ipfs = createKuboBackend({ apiUrl: fakeUrl });
    const scrambled = entries(file('a/x', '1'), file('b/y', '2'), file('a/z', '3'));
    await assertCode(ipfs.addEntries(scrambled, defaultAddOptions()), 'request.invalid');
    const ordered = await ipfs.addEntries(entries(file('a/x', '1'), file('a/z', '3'), file('b/y', '2')), defaultAddOptions());
    assert.match(ordered.cid, /^Qm/);
  });

  test('an unreachable node is an internal error, not a hang', async () => {
    const ipfs = createKuboBackend({ apiUrl: 'http://127.0.0.1:9', timeoutMs: 2_000 });
    await assertCode(ipfs.id(), 'internal');
  });
});

// ---- the stand-in ----

const blocks = new Map<string, Uint8Array>();
const store = {
  put: async (cid: { toString(): string }, bytes: Uint8Array) => (blocks.set(cid.toString(), bytes), cid),
  get: async function* (cid: { toString(): string }) {
    const bytes = blocks.get(cid.toString());
    if (!bytes) throw Object.assign(new Error(`could not find ${cid}`), { name: 'NotFoundError' });
    yield bytes;
  },
};
const discard = { put: async (cid: unknown) => cid };

/** The last `add` request the stand-in received, as it came over the wire. */
let lastAdd: { query: URLSearchParams; contentType: string; body: Buffer } | undefined;

async function fakeKubo(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const url = new URL(request.url ?? '/', 'http://kubo');
  const query = url.searchParams;
  const json = (body: unknown): void => void response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const arg = (query.get('arg') ?? '').replace(/^\/ipfs\//, '');
  switch (url.pathname) {
    case '/api/v0/id':
      return json({ ID: '12D3KooWRBy97UB99e3J6hiPesre1MZeuNQvfan4gBziswrRJsNK' });
    case '/api/v0/version':
      return json({ Version: '0.0.0-stand-in' });
    case '/api/v0/pin/add':
      return json({ Pins: [arg] });
    case '/api/v0/files/stat': {
      const entry = await exporter(arg, store as never);
      const directory = entry.type === 'directory';
      return json({ Hash: entry.cid.toString(), Size: directory ? 0 : Number(entry.size), Type: directory ? 'directory' : 'file' });
    }
    case '/api/v0/ls': {
      const entry = await exporter(arg, store as never);
      if (entry.type !== 'directory') throw new Error('not a directory');
      const links = [];
      for await (const child of entry.entries()) {
        const resolved = await exporter(child.cid, store as never);
        links.push({ Name: child.name, Hash: child.cid.toString(), Size: resolved.type === 'directory' ? 0 : Number(resolved.size), Type: resolved.type === 'directory' ? 1 : 2 });
      }
      return void response.writeHead(200).end(`${JSON.stringify({ Objects: [{ Hash: arg, Links: links }] })}\n`);
    }
    case '/api/v0/cat': {
      const entry = await exporter(arg, store as never);
      if (entry.type === 'directory') throw new Error('this dag node is a directory');
      if (entry.type === 'object') throw new Error('not unixfs');
      const offset = Number(query.get('offset') ?? 0);
      const length = query.has('length') ? Number(query.get('length')) : undefined;
      const chunks = [];
      for await (const chunk of entry.content({ offset, length })) chunks.push(chunk);
      return void response.writeHead(200).end(Buffer.concat(chunks));
    }
    case '/api/v0/add':
      return fakeAdd(request, response, query);
    default:
      throw new Error(`unknown command ${url.pathname}`);
  }
}

async function fakeAdd(request: http.IncomingMessage, response: http.ServerResponse, query: URLSearchParams): Promise<void> {
  assert.equal(query.get('chunker'), 'size-262144');
  assert.equal(query.get('pin'), 'false');
  const contentType = request.headers['content-type'] ?? '';
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  lastAdd = { query, contentType, body };
  const candidates: ImportCandidate[] = splitMultipart(body, contentType).map((part) => {
    const disposition = part.headers.get('content-disposition') ?? '';
    // Kubo's server reads the path with Go's url.QueryUnescape: "+" is a space, %XX a byte.
    const name = decodeURIComponent((/filename="([^"]*)"/.exec(disposition)?.[1] ?? '').replaceAll('+', ' '));
    if (part.headers.get('content-type') === 'application/x-directory') return { path: name };
    return name === '' ? { content: part.data } : { path: name, content: part.data };
  });
  const wrap = query.get('wrap-with-directory') === 'true';
  const options = {
    profile: 'unixfs-v0-2015' as const,
    cidVersion: query.get('cid-version') === '1' ? 1 as const : 0 as const,
    rawLeaves: query.get('raw-leaves') === 'true',
    wrapWithDirectory: wrap,
  };
  const target = query.get('only-hash') === 'true' ? discard : store;
  const lines: Array<{ Name: string; Hash: string; Size: string }> = [];
  for await (const entry of importer(candidates, target as never, options)) {
    lines.push({ Name: entry.path ?? entry.cid.toString(), Hash: entry.cid.toString(), Size: entry.size.toString() });
  }
  const wrapper = lines.find((line) => line.Name === '');
  if (wrapper && target === store) {
    // Kubo reports every entry; the importer does not yield an explicit directory left empty.
    const root = await exporter(wrapper.Hash, store as never);
    if (root.type === 'directory') {
      for await (const child of root.entries()) if (!lines.some((l) => l.Name === child.name)) lines.unshift({ Name: child.name, Hash: child.cid.toString(), Size: '4' });
    }
  }
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  response.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
}

/**
 * A whole multipart/form-data body cut into its parts (RFC 7578 framing: `--boundary` CRLF,
 * headers, a blank line, the data, CRLF `--boundary`, and `--boundary--` at the end).
 */
function splitMultipart(body: Buffer, contentType: string): Array<{ headers: Map<string, string>; data: Uint8Array }> {
  const boundary = /boundary=(?:"([^"]+)"|([^\s;]+))/i.exec(contentType);
  if (!boundary) throw new Error(`no boundary in ${JSON.stringify(contentType)}`);
  const dashBoundary = `--${boundary[1] ?? boundary[2]}`;
  if (body.indexOf(dashBoundary) !== 0) throw new Error('the body does not start with the boundary');
  const parts = [];
  let at = dashBoundary.length;
  while (body.toString('latin1', at, at + 2) === '\r\n') {
    const headersEnd = body.indexOf('\r\n\r\n', at);
    const end = body.indexOf(`\r\n${dashBoundary}`, at);
    if (headersEnd === -1 || end === -1 || headersEnd > end) throw new Error('a part without headers or without an end');
    const headers = new Map<string, string>();
    for (const line of body.toString('latin1', at + 2, headersEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
    }
    parts.push({ headers, data: new Uint8Array(body.subarray(headersEnd + 4, end)) });
    at = end + 2 + dashBoundary.length;
  }
  if (body.toString('latin1', at, at + 2) !== '--') throw new Error('the body does not end with the closing boundary');
  return parts;
}
