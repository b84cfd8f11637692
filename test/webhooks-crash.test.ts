import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '../src/config/config.ts';
import { createLogger } from '../src/shared/logger.ts';
import { composePlatform, type Platform } from '../src/compose/platform.ts';
import { createWebhookRepository } from '../src/store/webhook-repository.ts';
import { createMerchantRepository } from '../src/store/merchant-repository.ts';
import { addWebhookEndpoint } from '../src/webhooks/webhook-endpoints.ts';
import { verifySignature } from '../src/webhooks/signature.ts';
import { freePort, rpcOver, startServerProcess, stopServerProcess, type ServerProcess } from './support/server-process.ts';
import { testStoreEnv } from './support/stores.ts';
import { openSession, paymentsClient } from './support/payment-calls.ts';
import { sha256Hex } from './support/transfer-scheme.ts';
import { waitFor } from './support/wait-for.ts';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.ts';

// The server as users run it (`node src/main.ts`), killed with SIGKILL right after a payment's
// approval is committed and before its webhook could be sent (the FAILPOINTS hook
// `payment.after-approve`, and a back office that is down at that moment). Started again on the
// same data, it still delivers the event: the outbox row was written with the approval.
const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-webhook-crash-'));
let grpcPort: number;
let env: Record<string, string>;
let server: ServerProcess;
let operator: Platform;
let receiver: WebhookReceiver;

const composeOperator = () => composePlatform(loadConfig({ ...env, LOG_LEVEL: 'silent' }), createLogger('silent'), { chainMode: 'attach', pairing: 'in-process' });

before(async () => {
  grpcPort = await freePort();
  env = {
    DATA_DIR: dataDir, ...(await testStoreEnv(dataDir)), CHAIN_POLL_MS: '50', GRPC_PORT: String(grpcPort), GRPC_HOST: '127.0.0.1',
    PAYMENT_PAIRING_WINDOW_SECONDS: '10', PAYMENT_IDLE_TIMEOUT_SECONDS: '20',
    WEBHOOK_POLL_SECONDS: '0.2', WEBHOOK_RETRY_INITIAL_SECONDS: '0.5', WEBHOOK_RETRY_MAX_SECONDS: '1',
  };
  server = await startServerProcess({ ...env, VIXPAY_TEST_FAULTS: '1', FAILPOINTS: 'payment.after-approve=crash' });
  operator = await composeOperator();
  receiver = await startWebhookReceiver();
});
after(async () => {
  await receiver?.close();
  await operator?.stop();
  if (server) await stopServerProcess(server);
  rmSync(dataDir, { recursive: true, force: true });
});

test('kill -9 between a payment\'s approval and its webhook: after a restart the event still arrives, once, signed', async () => {
  const store = await operator.payments.addStore({ tid: 'T-1001', name: 'Corner Cafe' });
  await operator.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  const { secret } = await addWebhookEndpoint({
    webhooks: createWebhookRepository(operator.store.db, operator.store.dialect), merchants: createMerchantRepository(operator.store.db),
    vault: operator.vault, clock: operator.clock,
  }, { tid: store.tid, url: receiver.url, events: ['payment.approved'], allowPrivate: true });
  await receiver.close();

  // A user of the server: custodial account over its token API, VIXP, a JWT.
  const account = (await rpcOver(server.baseUrl, '/token', 'createAddress', {})).resultData as { address: string; secretKey: string };
  await operator.wallet.mint('ethereum', { to: account.address, amount: '20' });
  const userId = `user-${randomUUID()}`;
  await operator.identity.users.createUser({ id: userId, password: 'correct horse battery', name: 'Payer', walletAddress: account.address });
  const { token } = await operator.identity.jwt.issueAccessToken(userId);

  const client = paymentsClient(grpcPort);
  const uuid = randomUUID();
  const tranNo = `TR${randomUUID().slice(0, 8)}`;
  const app = openSession(client, 'DoPayment', token);
  const pos = openSession(client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send({
    state: 'START_PAY', tid: store.tid, tran_no: tranNo, exchange_amount: '15000', user_uuid: uuid,
    user_address: account.address, expiration_time: String(Math.floor(Date.now() / 1000) + 300),
  });
  const request = (await app.next()).content;
  assert.equal(request.state, 'REQUEST_TRANSFER');
  const { tempKey } = (await rpcOver(server.baseUrl, '/token', 'net_getTempKey', { address: account.address, keyType: 'transfer' })).resultData;
  const hashKey = sha256Hex(`${tempKey}|${account.secretKey}`);
  const data = sha256Hex(`${account.address}|${request.settlement_address}|${request.token_amount}|${tempKey}|${hashKey}`);
  const { signature } = (await rpcOver(server.baseUrl, '/token', 'signData', { address: account.address, tempKey, hashKey, data })).resultData;
  app.send({ state: 'TRANSFER', tran_no: tranNo, transfer_key: tempKey, hash_key: hashKey, transfer_signature: signature, transfer_comment: request.transfer_comment });

  const { child } = server;
  await waitFor(() => child.exitCode !== null || child.signalCode !== null, { timeoutMs: 60_000, message: 'the server reaches payment.after-approve' });
  assert.equal(child.signalCode, 'SIGKILL', server.output());
  client.close();

  // The approval was committed with its event; nothing was delivered.
  const { db } = operator.store;
  const payment = await db.selectFrom('payments').selectAll().where('tid', '=', store.tid).where('tran_no', '=', tranNo).executeTakeFirstOrThrow();
  assert.equal(payment.status, 'approved');
  const [delivery] = await db.selectFrom('webhook_deliveries').selectAll().execute();
  assert.equal(delivery?.status, 'pending');
  assert.equal(receiver.received.length, 0);

  // Up again on the same data (its chain nodes may have been started anew: attach to them again).
  server = await startServerProcess(env);
  const url = readFileSync(path.join(dataDir, 'chains', 'ethereum', 'anvil.url'), 'utf8').trim();
  if (url !== operator.chains.ethereum.url) {
    await operator.stop();
    operator = await composeOperator();
  }
  await receiver.open();
  const arrived = await waitFor(() => receiver.received.find((r) => r.event.data.tran_no === tranNo), { timeoutMs: 60_000, message: 'the event arrives after the restart' });
  assert.equal(arrived.event.type, 'payment.approved');
  assert.equal(arrived.event.data.approval_no, payment.approval_no);
  assert.equal(arrived.event.data.transfer_transaction_id, payment.transfer_transaction_id);
  assert.equal(verifySignature(secret, arrived.signature, arrived.body), true);
  await waitFor(async () => (await operator.store.db.selectFrom('webhook_deliveries').select('status').executeTakeFirst())?.status === 'delivered',
    { timeoutMs: 10_000, message: 'the delivery is recorded delivered' });
  assert.equal(receiver.received.filter((r) => r.event.data.tran_no === tranNo).length, 1, 'once');
});
