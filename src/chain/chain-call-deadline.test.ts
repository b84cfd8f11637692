import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPublicClient, http, TimeoutError } from 'viem';
import { withDeadline } from './chain-clients.ts';
import { startDelayingProxy } from '../../test/support/delaying-proxy.ts';

test('a node call answers by its deadline, retries included: a node that holds it fails it with a TimeoutError while the node still has it', async () => {
  // A node that answers every call at once, behind a proxy that holds each answer 5 s; viem's own
  // timeout of one attempt (10 s) would not end the call: the deadline does.
  const node = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => { body += chunk.toString(); });
    request.on('end', () => {
      const { id } = JSON.parse(body) as { id: number };
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: '0x2a' }));
    });
  });
  await new Promise<void>((resolve) => node.listen(0, '127.0.0.1', resolve));
  const proxy = await startDelayingProxy(`http://127.0.0.1:${(node.address() as AddressInfo).port}`);
  try {
    const client = createPublicClient({ transport: withDeadline(http(proxy.url, { retryCount: 2, timeout: 10_000 }), 300) });
    assert.equal(await client.getBlockNumber({ cacheTime: 0 }), 42n, 'a quick node answers');
    proxy.delayMs = 5_000;
    await assert.rejects(client.getBlockNumber({ cacheTime: 0 }), TimeoutError);
    assert.ok(proxy.inFlight > 0, 'failed by the deadline, not by the node answering');
  } finally {
    await proxy.close();
    node.close();
  }
});
