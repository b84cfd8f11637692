import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { exporter } from 'ipfs-unixfs-exporter';
import { importer, type ImportCandidate } from 'ipfs-unixfs-importer';
import { partsToEntries } from '../transports/http/routes/ipfs-add-parts.ts';
import { multipartBoundary, readMultipart } from '../transports/http/routes/ipfs-multipart.ts';
import { defaultAddOptions } from './ipfs-backend.ts';
import { assertCode, entries, file, ipfsBackendContract } from './ipfs-backend.contract.ts';
import { createKuboBackend } from './kubo-backend.ts';
import { kuboImporterOptions } from './unixfs-profile.ts';

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
//    RPC built on the same importer: it proves our side of the wire, not Kubo's behaviour.
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
  const parts = readMultipart(request, multipartBoundary(request.headers['content-type']), { maxParts: 1e6, maxTotalBytes: 2 ** 40, maxPartHeaderBytes: 16_384 });
  async function* candidates(): AsyncGenerator<ImportCandidate> {
    for await (const entry of partsToEntries(parts, 2 ** 40)) {
      if (entry.kind === 'directory') yield { path: entry.path };
      else yield entry.path === '' ? { content: entry.content } : { path: entry.path, content: entry.content };
    }
  }
  const wrap = query.get('wrap-with-directory') === 'true';
  const options = { ...kuboImporterOptions({ cidVersion: query.get('cid-version') === '1' ? 1 : 0, rawLeaves: query.get('raw-leaves') === 'true' }), wrapWithDirectory: wrap };
  const target = query.get('only-hash') === 'true' ? discard : store;
  const lines: Array<{ Name: string; Hash: string }> = [];
  for await (const entry of importer(candidates(), target as never, options)) lines.push({ Name: entry.path ?? entry.cid.toString(), Hash: entry.cid.toString() });
  const wrapper = lines.find((line) => line.Name === '');
  if (wrapper && target === store) {
    // Kubo reports every entry; the importer does not yield an explicit directory left empty.
    const root = await exporter(wrapper.Hash, store as never);
    if (root.type === 'directory') for await (const child of root.entries()) if (!lines.some((l) => l.Name === child.name)) lines.unshift({ Name: child.name, Hash: child.cid.toString() });
  }
  response.writeHead(200, { 'content-type': 'application/x-ndjson' });
  response.end(lines.map((line) => `${JSON.stringify({ ...line, Size: '0' })}\n`).join(''));
}
