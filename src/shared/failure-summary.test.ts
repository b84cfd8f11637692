import assert from 'node:assert/strict';
import { test } from 'node:test';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { describeFailure } from './failure-summary.ts';

test('a failure is one line naming the URL, file or address involved', async () => {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  const refused = await fetch(`http://127.0.0.1:${port}/healthz`).catch((error: unknown) => error);
  assert.match(describeFailure(refused), new RegExp(`^fetch failed: .*ECONNREFUSED.*127\\.0\\.0\\.1:${port}`));
  const missing = await import('node:fs/promises').then((fs) => fs.readFile('/nonexistent/vixpay.sqlite')).catch((error: unknown) => error);
  assert.match(describeFailure(missing), /\/nonexistent\/vixpay\.sqlite/);
  const viemLike = Object.assign(new Error('HTTP request failed.\n\nURL: http://rpc.example\nRequest body: {"params":["0x' + 'ab'.repeat(100) + '"]}'), {
    shortMessage: 'HTTP request failed.', url: 'http://rpc.example',
  });
  assert.equal(describeFailure(viemLike), 'HTTP request failed. (http://rpc.example)');
  assert.doesNotMatch(describeFailure(new Error('a\nb')), /\n/);
});
