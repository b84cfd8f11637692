import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { isDomainError } from '#shared/errors.ts';
import { createEthrResolver } from './did-agent.ts';

// did:ethr resolution against nodes that misbehave, no chain needed: a node that never answers and
// one that refuses connections fail the resolution as `chain.unavailable` by the call deadline; a node
// that answers with a JSON-RPC error, and a DID of a network we have no node for, are answered as a
// DID that does not resolve (ethr-did-resolver's own answer), as before.
const address = '0x66289cAdC83644F166fF2b7fD80382A7886b2b5e';
const registry = '0x0000000000000000000000000000000000000001';
let silent: Server;
let erring: Server;
const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

before(async () => {
  silent = createServer(() => undefined);
  erring = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: number } | { id: number }[];
      const answer = (call: { id: number }) => ({ jsonrpc: '2.0', id: call.id, error: { code: -32000, message: 'header not found' } });
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body)));
    });
  });
  await Promise.all([silent, erring].map((server) => new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))));
});
after(async () => {
  for (const server of [silent, erring]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function resolveOn(rpcUrl: string, did = `did:ethr:${address}`) {
  const resolver = createEthrResolver({ rpcUrl, chainId: 31337, registry, callTimeoutMs: 300 });
  const started = performance.now();
  try {
    return { result: await resolver.resolve(did), ms: performance.now() - started };
  } catch (error) {
    return { error, ms: performance.now() - started };
  }
}

test('a node that does not answer: chain.unavailable once the call deadline has passed, not ethers\' 300 s later', async () => {
  const { error, ms } = await resolveOn(urlOf(silent));
  assert.ok(isDomainError(error) && error.code === 'chain.unavailable', String(error));
  assert.match(error.message, new RegExp(address));
  assert.ok(ms >= 290 && ms < 2_000, `answered in ${Math.round(ms)} ms`);
});

test('a node that refuses the connection: chain.unavailable at once', async () => {
  const { error, ms } = await resolveOn('http://127.0.0.1:1');
  assert.ok(isDomainError(error) && error.code === 'chain.unavailable', String(error));
  assert.ok(ms < 2_000, `answered in ${Math.round(ms)} ms`);
});

test('a node answering with a JSON-RPC error, and a network we have no node for: the DID does not resolve, nothing thrown', async () => {
  const erred = await resolveOn(urlOf(erring));
  assert.equal(erred.error, undefined, String(erred.error));
  assert.equal(erred.result?.didResolutionMetadata.error, 'notFound');
  assert.match(erred.result?.didResolutionMetadata.message ?? '', /CALL_EXCEPTION/, 'the node was asked and answered the call with an error');
  assert.equal(erred.result?.didDocument, null);

  const elsewhere = await resolveOn(urlOf(silent), `did:ethr:sepolia:${address}`);
  assert.equal(elsewhere.error, undefined, String(elsewhere.error));
  assert.equal(elsewhere.result?.didResolutionMetadata.error, 'unknownNetwork');
});
