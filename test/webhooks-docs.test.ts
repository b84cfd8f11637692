import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { storeFactories } from './support/store-factories.ts';
import { freePort } from './support/server-process.ts';
import { waitFor } from './support/wait-for.ts';
import type { Store } from '../src/store/db.ts';
import { createKeyVault } from '../src/shared/key-vault.ts';
import { createLogger } from '../src/shared/logger.ts';
import { createMerchantRepository } from '../src/store/merchant-repository.ts';
import { appendWebhookEvent, createWebhookRepository, type WebhookRepository } from '../src/store/webhook-repository.ts';
import { retryWindowMs } from '../src/webhooks/backoff.ts';
import { createWebhookDelivery } from '../src/webhooks/webhook-delivery.ts';
import { addWebhookEndpoint, rotateWebhookSecret, type WebhookEndpointDeps } from '../src/webhooks/webhook-endpoints.ts';
import { signatureHeaderValue } from '../src/webhooks/signature.ts';
import { rewardIssuedEvent } from '../src/webhooks/webhook-events.ts';

// docs/webhooks.md's receiver example, run as written (its code block, saved as a file) against the
// platform's own sender and against forged, tampered and replayed deliveries.
const doc = readFileSync('docs/webhooks.md', 'utf8');
const example = /<!-- receiver-example -->\s*```js\n([\s\S]*?)\n```/.exec(doc)?.[1];
const dir = mkdtempSync(path.join(tmpdir(), 'vixpay-webhook-doc-'));
let store: Store;
let dispose: () => Promise<void>;
let repository: WebhookRepository;
let deps: WebhookEndpointDeps;
const vault = createKeyVault(randomBytes(32));
let receiver: ChildProcess;
let output = '';
let url: string;
let endpointId: string;
let secret: string;

before(async () => {
  assert.ok(example, 'docs/webhooks.md has the receiver example');
  ({ store, dispose } = await storeFactories[0]!.open());
  repository = createWebhookRepository(store.db, store.dialect);
  const merchants = createMerchantRepository(store.db);
  await merchants.insertStore({ tid: 'T-1001', name: 'Cafe', settlementAddress: '0xS', apiKeyHash: 'h1' }, Date.now());
  deps = { webhooks: repository, merchants, vault, clock: Date.now };
  const port = await freePort();
  url = `http://127.0.0.1:${port}/hook`;
  ({ id: endpointId, secret } = await addWebhookEndpoint(deps, { tid: 'T-1001', url, events: [], allowPrivate: true }));
  writeFileSync(path.join(dir, 'receiver.mjs'), example);
  receiver = spawn(process.execPath, [path.join(dir, 'receiver.mjs')], {
    env: { ...process.env, VIXPAY_WEBHOOK_SECRET: secret, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  receiver.stdout?.on('data', (d: Buffer) => { output += d.toString(); });
  receiver.stderr?.on('data', (d: Buffer) => { output += d.toString(); });
  await waitFor(() => fetch(url, { method: 'POST', body: '{}' }).then((r) => r.status === 400, () => false), { timeoutMs: 10_000, message: 'the example receiver listens' });
});
after(async () => {
  receiver?.kill();
  await dispose?.();
  rmSync(dir, { recursive: true, force: true });
});

const sender = () => createWebhookDelivery({
  repository, vault, clock: Date.now, logger: createLogger('silent'), timeoutMs: 5000, batchSize: 10,
  policy: { initialMs: 10_000, maxMs: 3_600_000, windowMs: retryWindowMs }, resCodeOf: () => ({ res_code: '10', res_message: 'Internal server error' }),
});
const event = (reason: string) => rewardIssuedEvent('T-1001', {
  rewardId: randomBytes(12).toString('hex').toUpperCase(), rewardReason: reason, rewardDate: '20261123090000', contractAddress: '0xC', tokenSymbol: 'VIXP',
  tokenAmount: '2', exchangeDateIndex: '2026112300001', exchangeRate: '1500', exchangeAmount: '3000', exchangeCurrency: 'KRW',
});

test('the example receiver accepts what the platform sends, and processes each event once', async () => {
  const id = await store.db.transaction().execute((trx) => appendWebhookEvent(trx, event('first'), Date.now()));
  assert.equal(await sender().runOnce(), 1);
  assert.deepEqual(await repository.counts(), { pending: 0, delivered: 1, failed: 0 }, 'the example answered 2xx');
  await waitFor(() => output.includes(`reward.issued ${id} tid=T-1001`), { timeoutMs: 5000, message: 'the example processed the event' });
  // The same event again (a retry whose answer was lost): acknowledged, not processed twice.
  const body = JSON.stringify({ id, type: 'reward.issued', created: Math.floor(Date.now() / 1000), data: { tid: 'T-1001' } });
  const again = await post(body, signatureHeaderValue([secret], Math.floor(Date.now() / 1000), body));
  assert.equal(again, 200);
  assert.equal(output.split(id).length - 1, 1, 'processed once');
});

test('the example receiver refuses another secret, a changed body and a delivery older than 5 minutes', async () => {
  const body = JSON.stringify({ id: 'evt_forged', type: 'payment.approved', created: 0, data: { tid: 'T-1001' } });
  const now = Math.floor(Date.now() / 1000);
  assert.equal(await post(body, signatureHeaderValue(['whsec_other'], now, body)), 400);
  assert.equal(await post(body.replace('T-1001', 'T-9999'), signatureHeaderValue([secret], now, body)), 400);
  assert.equal(await post(body, signatureHeaderValue([secret], now - 301, body)), 400, 'replayed after 5 minutes');
  assert.equal(await post(body, signatureHeaderValue([secret], now - 240, body)), 200, 'within 5 minutes');
  assert.equal(await post(body, ''), 400);
});

test('after rotate-secret the example, still on the old secret, keeps accepting deliveries (two v1 for 24 h)', async () => {
  await rotateWebhookSecret(deps, endpointId);
  const id = await store.db.transaction().execute((trx) => appendWebhookEvent(trx, event('after-rotation'), Date.now()));
  await sender().runOnce();
  assert.equal((await repository.counts()).delivered, 2);
  await waitFor(() => output.includes(id), { timeoutMs: 5000, message: 'the example processed the event signed during the rotation' });
});

async function post(body: string, signature: string): Promise<number> {
  const response = await fetch(url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'vixpay-signature': signature } });
  await response.arrayBuffer();
  return response.status;
}
