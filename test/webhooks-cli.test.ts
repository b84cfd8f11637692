import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { paymentsClient, unary } from './support/payment-calls.ts';
import { waitFor } from './support/wait-for.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';
import { verifySignature } from '../src/webhooks/signature.ts';

// The operator's `vixpay webhook …` commands and `vixpay listen` beside a running server, as
// docs/webhooks.md shows them.
const run = promisify(execFile);
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-webhook-cli-'));
const cliEnv = { ...process.env, DATA_DIR: dataDir, ...(await testStoreEnv(dataDir)), LOG_LEVEL: 'silent' };
let server: ServerProcess;
let grpcPort: number;
let receiver: WebhookReceiver;
let store: { tid: string; apiKey: string; settlementAddress: string };

async function vixpay(...args: string[]): Promise<any> {
  const { stdout } = await run(process.execPath, ['bin/vixpay.js', ...args, '--json'], { env: cliEnv });
  return JSON.parse(stdout);
}

async function refused(...args: string[]): Promise<{ code: string; message: string }> {
  const error = await vixpay(...args).then(() => undefined, (e: { code: number; stdout: string }) => e);
  assert.ok(error, `vixpay ${args.join(' ')} is refused`);
  assert.equal(error.code, 1);
  return JSON.parse(error.stdout).error;
}

before(async () => {
  grpcPort = await freePort();
  server = await startServerProcess({
    DATA_DIR: dataDir, GRPC_PORT: String(grpcPort), GRPC_HOST: '127.0.0.1',
    WEBHOOK_POLL_SECONDS: '0.2', WEBHOOK_RETRY_INITIAL_SECONDS: '0.5', WEBHOOK_RETRY_MAX_SECONDS: '1',
  });
  store = await vixpay('store', 'add', '--tid', 'T-1001', '--name', 'Corner Cafe');
  await vixpay('rate', 'publish', '--rate', '1500');
  await vixpay('token', 'mint', '--to', store.settlementAddress, '--amount', '100');
  receiver = await startWebhookReceiver();
});
after(async () => {
  await receiver?.close();
  if (server) await stopServerProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
});

test('webhook add prints the secret once; list never shows it; rotate-secret keeps the old one 24 h; remove', async () => {
  const added = await vixpay('webhook', 'add', '--tid', 'T-1001', '--url', 'https://backoffice.example/hooks/vixpay');
  const documented = JSON.parse(/<!-- cli: webhook-add -->\s*```json\n([\s\S]*?)\n```/.exec(readFileSync('docs/webhooks.md', 'utf8'))![1]!);
  assert.deepEqual(Object.keys(added).sort(), Object.keys(documented).sort(), 'the shape docs/webhooks.md shows');
  assert.match(added.id, /^we_[0-9a-f]{24}$/);
  assert.match(added.secret, /^whsec_[\w-]{43}$/);
  assert.deepEqual(added.events, ['*']);

  const listed = await vixpay('webhook', 'list', '--tid', 'T-1001');
  assert.deepEqual(listed.map((e: { id: string }) => e.id), [added.id]);
  assert.ok(!JSON.stringify(listed).includes(added.secret) && !('secret' in listed[0]), 'never the secret');

  const rotated = await vixpay('webhook', 'rotate-secret', added.id);
  assert.notEqual(rotated.secret, added.secret);
  const [after] = await vixpay('webhook', 'list');
  const overlap = Date.parse(after.previousSecretExpiresAt) - Date.now();
  assert.ok(overlap > 23.9 * 3600_000 && overlap <= 24 * 3600_000, 'the old secret signs for 24 hours more');

  assert.deepEqual(await vixpay('webhook', 'remove', added.id), { id: added.id, removed: true });
  assert.deepEqual(await vixpay('webhook', 'list'), []);
  assert.equal((await refused('webhook', 'remove', added.id)).code, 'request.not_found');
});

test('webhook add refuses an unknown store, a plain-http URL off this machine and an unknown event type', async () => {
  assert.equal((await refused('webhook', 'add', '--tid', 'T-9999', '--url', 'https://a.example/h')).code, 'request.not_found');
  assert.equal((await refused('webhook', 'add', '--tid', 'T-1001', '--url', 'http://a.example/h')).code, 'request.invalid');
  const unknown = await refused('webhook', 'add', '--tid', 'T-1001', '--url', 'https://a.example/h', '--events', 'payment.approved,payment.refunded');
  assert.match(unknown.message, /payment\.refunded/);
  assert.deepEqual(await vixpay('webhook', 'list'), []);
});

// item 5 of issue 19: these https URLs were taken, and their deliveries connected.
test('webhook add over https refuses loopback, private, link-local, CGNAT and metadata hosts unless --allow-private, which the endpoint keeps', async () => {
  for (const url of ['https://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/h', 'https://192.168.1.1/h', 'https://[::1]/h',
    'https://127.0.0.1:8443/h', 'https://100.64.0.1/h', 'https://[fe80::1]/h', 'https://metadata.google.internal/computeMetadata/v1/', 'https://localhost/h']) {
    const refusal = await refused('webhook', 'add', '--tid', 'T-1001', '--url', url);
    assert.equal(refusal.code, 'request.invalid', url);
    assert.match(refusal.message, /public addresses only, unless --allow-private/, url);
  }
  assert.deepEqual(await vixpay('webhook', 'list'), [], 'none was stored');
  const optedIn = await vixpay('webhook', 'add', '--tid', 'T-1001', '--url', 'https://192.168.1.1/h', '--allow-private');
  assert.equal(optedIn.allowPrivate, true);
  const [listed] = await vixpay('webhook', 'list');
  assert.equal(listed.allowPrivate, true, 'kept with the endpoint');
  await vixpay('webhook', 'remove', optedIn.id);
});

test('vixpay listen forwards the running platform\'s events to a local URL, signed with the session\'s secret, and cleans up on Ctrl-C', async () => {
  const listen = spawn(process.execPath, ['bin/vixpay.js', 'listen', '--forward-to', receiver.url, '--tid', 'T-1001'], { env: cliEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  listen.stdout.on('data', (d: Buffer) => { output += d.toString(); });
  listen.stderr.on('data', (d: Buffer) => { output += d.toString(); });
  try {
    const secret = await waitFor(() => /Signing secret of this session: (whsec_\S+)/.exec(output)?.[1], { timeoutMs: 20_000, message: `listen is ready:\n${output}` });
    const client = paymentsClient(grpcPort);
    const issued = await unary(client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: 'listen-demo', exchange_amount: '3000' });
    client.close();
    assert.equal(issued.common.res_code, '00', JSON.stringify(issued.common));
    const event = await waitFor(() => receiver.received.find((r) => r.event.data.reward_id === issued.content.reward_id), { timeoutMs: 20_000, message: 'the event is forwarded' });
    assert.equal(event.event.type, 'reward.issued');
    assert.equal(verifySignature(secret, event.signature, event.body), true);
    await waitFor(() => output.includes(`reward.issued ${event.event.id}  -> 200`), { timeoutMs: 5000, message: `listen prints the forwarded event:\n${output}` });
    assert.equal((await vixpay('webhook', 'list')).length, 1, 'its temporary endpoint');
  } finally {
    listen.kill('SIGINT');
  }
  const [code] = await once(listen, 'exit');
  assert.equal(code, 0, output);
  assert.deepEqual(await vixpay('webhook', 'list'), [], 'removed on Ctrl-C');
});
