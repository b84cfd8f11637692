import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { startTestPlatform, call, type TestPlatform } from './support/platform.ts';
import { prepareTransfer, type Wallet } from './support/transfer-scheme.ts';
import { deleteKeys, redisSkip, testRedisUrl, uniquePrefix } from './support/redis.ts';
import { waitFor } from './support/wait-for.ts';
import { testStore } from './support/stores.ts';
import { createLogger } from '../src/shared/logger.ts';
import { startPaymentServer } from '../src/main.ts';
import type { GrpcServer } from '../src/transports/grpc/grpc-server.ts';

import { sample } from './support/metrics-text.ts';

const protoFile = new URL('../proto/g00/payments/v2/payments.proto', import.meta.url).pathname;
const definition = protoLoader.loadSync(protoFile, { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true });
const PaymentsService = (grpc.loadPackageDefinition(definition) as any).g00.payments.v2.PaymentsService as grpc.ServiceClientConstructor;

describe('health and metrics on a real platform (SQLite, four anvils, gRPC server)', () => {
  let t: TestPlatform;
  let server: GrpcServer;
  const lines: Array<Record<string, any>> = [];

  before(async () => {
    const destination = new Writable({ write(chunk, _encoding, done) { lines.push(JSON.parse(String(chunk))); done(); } });
    t = await startTestPlatform({ logger: createLogger('info', destination) });
    server = await startPaymentServer(t.platform, t.platform, { port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await server?.stop(1000);
    await t?.stop();
  });

  const metricsText = async () => {
    const response = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(response.statusCode, 200);
    assert.match(String(response.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    return response.body;
  };

  test('/healthz stays liveness; /readyz answers 200 with every dependency and listener up', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    const response = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 200, response.body);
    const body = response.json();
    assert.equal(body.status, 'ready');
    // `disk`: SQLite's DATA_DIR only (a PostgreSQL platform writes its records elsewhere).
    assert.deepEqual(Object.keys(body.checks).sort(),
      ['chain:bnb', 'chain:ethereum', 'chain:opbnb', 'chain:optimism', ...(testStore() === 'sqlite' ? ['disk'] : []), 'grpc', 'ipfs', 'relayer', 'store']);
    for (const check of Object.values<any>(body.checks)) assert.equal(check.status, 'up');
  });

  test('x-request-id: a well-formed one is kept, anything else replaced; it is on every log line of the request', async () => {
    const kept = await t.app.inject({ method: 'POST', url: '/token', headers: { 'x-request-id': 'trace-42.a:b', 'content-type': 'application/json' }, payload: '{"jsonrpc":"2.0","id":1,"method":"nope"}' });
    assert.equal(kept.headers['x-request-id'], 'trace-42.a:b');
    const replaced = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\twith spaces' } });
    assert.match(String(replaced.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    const fresh = await t.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    const id = String(fresh.headers['x-request-id']);
    assert.match(id, /^[0-9a-f-]{36}$/);
    const ofRequest = lines.filter((line) => line.reqId === id);
    assert.deepEqual(ofRequest.map((line) => line.msg), ['incoming request', 'request completed']);
    assert.ok(lines.filter((line) => line.reqId === 'trace-42.a:b').length >= 2);
  });

  test('/metrics: process metrics, HTTP by route template, JSON-RPC by method and resultCode, transfer latency, relayer gauges', async () => {
    const created = async (): Promise<Wallet> => (await call(t.app, '/token', 'createAddress', {})).resultData;
    const alice = await created();
    const bob = await created();
    await t.platform.wallet.mint('ethereum', { to: alice.address, amount: '10' });
    const { data: _data, ...params } = await prepareTransfer(t.app, alice, bob.address, '1.5');
    assert.equal((await call(t.app, '/token', 'transfer', params)).resultCode, '200');
    await t.app.inject({ method: 'GET', url: '/v1/ict/pay/0xnot-a-transaction' });

    const text = await metricsText();
    assert.ok(sample(text, 'process_cpu_user_seconds_total')! > 0);
    assert.ok(sample(text, 'nodejs_heap_size_used_bytes')! > 0);
    assert.ok(sample(text, 'vixpay_http_requests_total', { route: '/token', method: 'POST', status: '200' })! >= 4);
    assert.ok(sample(text, 'vixpay_http_request_duration_seconds_count', { route: '/token', method: 'POST', status: '200' })! >= 4);
    // The route's template, never the URL.
    assert.ok(sample(text, 'vixpay_http_requests_total', { route: '/v1/ict/pay/:transactionId', method: 'GET' })! >= 1);
    assert.doesNotMatch(text, /0xnot-a-transaction/);
    assert.equal(sample(text, 'vixpay_jsonrpc_calls_total', { method: 'transfer', result_code: '200' }), 1);
    assert.equal(sample(text, 'vixpay_jsonrpc_calls_total', { method: 'net_getTempKey', result_code: '200' }), 1);
    assert.equal(sample(text, 'vixpay_jsonrpc_call_duration_seconds_count', { method: 'transfer' }), 1);
    assert.equal(sample(text, 'vixpay_transfer_duration_seconds_count', { network: 'ethereum', operation: 'transfer', outcome: 'settled' }), 1);
    assert.equal(sample(text, 'vixpay_relayer_journal_backlog', { network: 'ethereum' }) ?? 0, 0);
    for (const network of ['ethereum', 'optimism', 'bnb', 'opbnb']) assert.ok(sample(text, 'vixpay_relayer_gas_balance_ether', { network })! > 0, network);
    // The transfer went in a settlement batch of one, on one of the relayer lanes, each with gas and no pending nonce.
    assert.equal(sample(text, 'vixpay_settlement_batch_size_count', { network: 'ethereum' }), 1);
    assert.equal(sample(text, 'vixpay_settlement_batch_size_sum', { network: 'ethereum' }), 1);
    assert.equal(sample(text, 'vixpay_settlement_queue_depth', { network: 'ethereum' }), 0);
    t.platform.relayer.lanes.forEach((_, lane) => {
      assert.ok(sample(text, 'vixpay_relayer_lane_gas_balance_ether', { network: 'ethereum', lane: String(lane) })! > 0, `lane ${lane} gas`);
      assert.equal(sample(text, 'vixpay_relayer_lane_pending_transactions', { network: 'ethereum', lane: String(lane) }), 0, `lane ${lane} pending`);
    });
  });

  test('/metrics: every JSON-RPC call sent to a node, by network and method (a batch counts each of its calls)', async () => {
    const calls = (text: string, network: string, method: string) => sample(text, 'vixpay_node_rpc_calls_total', { network, method }) ?? 0;
    const sent = async () => Number((await t.platform.store.db.selectFrom('chain_txs').select((eb) => eb.fn.countAll<number>().as('n'))
      .where('network', '=', 'ethereum').executeTakeFirstOrThrow()).n);
    const before = await metricsText();
    for (const network of ['ethereum', 'optimism', 'bnb', 'opbnb']) assert.ok(calls(before, network, 'eth_chainId') >= 1, `${network}: the chain id asked at start`);
    // Every transaction the platform journaled was broadcast once by the platform's clients.
    assert.equal(calls(before, 'ethereum', 'eth_sendRawTransaction'), await sent());

    const created = async (): Promise<Wallet> => (await call(t.app, '/token', 'createAddress', {})).resultData;
    const carol = await created();
    const dave = await created();
    await t.platform.wallet.mint('ethereum', { to: carol.address, amount: '10' });
    const { data: _data, ...params } = await prepareTransfer(t.app, carol, dave.address, '2');
    assert.equal((await call(t.app, '/token', 'transfer', params)).resultCode, '200');
    assert.equal((await call(t.app, '/token', 'getBalance', { address: dave.address })).resultData.balance, '2');

    const after = await metricsText();
    // One mint, one settlement: two transactions sent, their receipts read, on ethereum only.
    assert.equal(calls(after, 'ethereum', 'eth_sendRawTransaction') - calls(before, 'ethereum', 'eth_sendRawTransaction'), 2);
    assert.equal(calls(after, 'ethereum', 'eth_sendRawTransaction'), await sent());
    // Receipts are read by block (eth_getBlockReceipts), by transaction where a node lacks that.
    const receiptReads = (text: string) => calls(text, 'ethereum', 'eth_getBlockReceipts') + calls(text, 'ethereum', 'eth_getTransactionReceipt');
    assert.ok(receiptReads(after) > receiptReads(before));
    assert.equal(calls(after, 'optimism', 'eth_sendRawTransaction'), calls(before, 'optimism', 'eth_sendRawTransaction'));
    // Labels are JSON-RPC method names only, never a URL, an address or a parameter.
    const methods = [...after.matchAll(/^vixpay_node_rpc_calls_total\{(.*)\} \d+$/gm)].map((m) => /method="([^"]*)"/.exec(m[1]!)![1]!);
    assert.ok(methods.length > 0);
    for (const method of methods) assert.match(method, /^(eth|net|web3|anvil|evm)_\w+$/);
    assert.doesNotMatch(after, new RegExp(carol.address.slice(2), 'i'));
  });

  test('/metrics: gRPC calls by call and res_code, open streams by kind', async () => {
    const client = new PaymentsService(`127.0.0.1:${server.port}`, grpc.credentials.createInsecure()) as grpc.Client & Record<string, any>;
    try {
      const metadata = new grpc.Metadata();
      metadata.set('authorization', 'Bearer not-a-key');
      const answer = await new Promise<any>((resolve, reject) => client.CancelPayment({ common: { tran_no: 'T1' }, content: { tran_no: 'T1' } }, metadata, (error: unknown, reply: unknown) => (error ? reject(error) : resolve(reply))));
      const resCode = answer.common.res_code as string;
      assert.notEqual(resCode, '00');

      const stream = client.StartPayment(new grpc.Metadata());
      const kindOpen = async (value: number) => {
        for (let i = 0; i < 100; i++) {
          if ((sample(await metricsText(), 'vixpay_grpc_open_streams', { kind: 'pos' }) ?? 0) === value) return;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.fail(`open pos streams never ${value}`);
      };
      await kindOpen(1);
      stream.on('error', () => undefined);
      stream.cancel();
      await kindOpen(0);

      const text = await metricsText();
      assert.equal(sample(text, 'vixpay_grpc_calls_total', { call: 'cancelPayment', res_code: resCode }), 1);
      assert.equal(sample(text, 'vixpay_grpc_calls_total', { call: 'startPayment', res_code: 'none' }), 1);
      assert.equal(sample(text, 'vixpay_grpc_call_duration_seconds_count', { call: 'cancelPayment' }), 1);
    } finally {
      client.close();
    }
  });

  test('/readyz answers 503 naming the chain whose node stopped answering, within the probe timeout, and 200 once it answers again', async () => {
    const pid = Number(readFileSync(path.join(t.dataDir, 'chains', 'bnb', 'anvil.pid'), 'utf8'));
    process.kill(pid, 'SIGSTOP');
    try {
      const started = performance.now();
      const response = await t.app.inject({ method: 'GET', url: '/readyz' });
      assert.ok(performance.now() - started < 2500, 'probes run in parallel with a short timeout');
      assert.equal(response.statusCode, 503, response.body);
      const body = response.json();
      assert.equal(body.status, 'not ready');
      assert.deepEqual(body.down, ['chain:bnb']);
      assert.equal(body.checks['chain:bnb'].status, 'down');
      assert.equal(body.checks['chain:ethereum'].status, 'up');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const again = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(again.statusCode, 200, again.body);
  });

  test('/readyz names the gRPC listener once it stops', async () => {
    await server.stop(500);
    const response = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(response.statusCode, 503);
    assert.deepEqual(response.json().down, ['grpc']);
  });
});

test('/readyz pings Redis when the payment streams pair through it (REDIS_URL)', { skip: await redisSkip() }, async () => {
  const redisKeyPrefix = uniquePrefix('readyz');
  const t = await startTestPlatform({ env: { REDIS_URL: testRedisUrl }, redisKeyPrefix });
  try {
    // Its connection of its own comes up beside the platform's: asked at once, it may still be connecting.
    const body = await waitFor(async () => {
      const response = await t.app.inject({ method: 'GET', url: '/readyz' });
      return response.statusCode === 200 ? response.json() : undefined;
    }, { timeoutMs: 3000, message: '/readyz 200 with Redis' });
    assert.equal(body.checks.redis.status, 'up');
  } finally {
    await t.stop();
    await deleteKeys(redisKeyPrefix);
  }
});
