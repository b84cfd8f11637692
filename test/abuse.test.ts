import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { once } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import { newUser, openSession, paymentsClient, startPay, startPaymentTest, transferFor, unary, type PaymentTest } from './support/payments.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { waitFor } from './support/wait-for.ts';

// Abuse on every interface, one table each: what is refused, and that the server keeps serving with
// bounded memory. What other files already prove is not repeated here (docs/reliability.md lists
// them): forged JWTs on the HTTP APIs (jwt-protection), on the payment server (payments-edges),
// replayed VPs (did-api), replayed signed transfers and mined calldata (money-safety,
// crash-recovery), slow bodies (request-timeouts), silent and too many streams (bounded-streams),
// a body over the size limit on JSON-RPC (token-api), another store's tid (payments-edges).
let p: PaymentTest;
let baseUrl: string;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
let otherStore: { tid: string; name: string; settlementAddress: string; apiKey: string };
const password = 'correct horse battery';

before(async () => {
  p = await startPaymentTest({ JSONRPC_BATCH_LIMIT: '50', GRPC_MAX_MESSAGE_BYTES: '65536', HTTP_BODY_LIMIT_BYTES: '65536' });
  baseUrl = await p.t.app.listen({ port: 0, host: '127.0.0.1' });
  store = await p.t.platform.payments.addStore({ tid: 'T-ABUSE', name: 'Abuse Cafe' });
  otherStore = await p.t.platform.payments.addStore({ tid: 'T-OTHER', name: 'Other Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const postJson = (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${baseUrl}${path}`, {
  method: 'POST', body, headers: { 'content-type': 'application/json', ...headers },
}).then(async (r) => ({ status: r.status, text: await r.text() }));

/** The server still answers, and a real operation still works. */
async function stillServing() {
  assert.equal((await fetch(`${baseUrl}/healthz`)).status, 200);
  const info = JSON.parse((await postJson('/token', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getTokenInfo', params: {} }))).text);
  assert.equal(info.result.resultCode, '200');
}

const rssMiB = () => process.memoryUsage().rss / 2 ** 20;

test('JSON-RPC: malformed, wrong-typed, oversized and foreign-account requests get a clear error each; a batch flood is bounded', async () => {
  const owner = (await (await postJson('/token', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'createAddress', params: {} }))).text);
  const victim = JSON.parse(owner).result.resultData as { address: string; secretKey: string };
  await p.t.platform.wallet.mint('ethereum', { to: victim.address, amount: '5' });
  const attacker = await p.t.platform.wallet.createAddress();
  // The attacker's own temp key and secret, and the victim's address: a transfer of someone else's tokens.
  const { data: _data, ...forged } = await prepareTransfer(p.t.app, attacker, attacker.address, '5');
  const call = (method: string, params: unknown) => JSON.stringify({ jsonrpc: '2.0', id: 7, method, params });
  const cases: Array<[string, string, RegExp]> = [
    // what, body, expected error (JSON-RPC error code or resultCode)
    ['empty body', '', /-32700|-32600|"statusCode":400/],
    ['truncated JSON', '{"jsonrpc":"2.0","id":1,"method":', /-32700/],
    ['a bare number', '123', /-32600/],
    ['null', 'null', /-32600/],
    ['an empty batch', '[]', /-32600/],
    ['no method', '{"jsonrpc":"2.0","id":1}', /-32600/],
    ['a prototype key as method', call('__proto__', {}), /-32601/],
    ['constructor as method', call('constructor', {}), /-32601/],
    ['params as a string', call('transfer', 'all of it'), /-32600/],
    ['a 40 KB address', call('getBalance', { address: `0x${'a'.repeat(40_000)}` }), /"resultCode":"4\d\d"|-32602/],
    ['an address of the wrong type', call('getBalance', { address: { $gt: '' } }), /"resultCode":"4\d\d"|-32602/],
    ['a negative amount', call('transfer', { ...forged, fromAddress: attacker.address, amount: '-5' }), /"resultCode":"4\d\d"/],
    ['an amount in exponent form', call('transfer', { ...forged, amount: '1e30' }), /"resultCode":"4\d\d"/],
    ['another account\'s tokens with my temp key and signature', call('transfer', { ...forged, fromAddress: victim.address, toAddress: attacker.address }), /"resultCode":"44\d"/],
    ['deep nesting', `${'['.repeat(20_000)}${']'.repeat(20_000)}`, /-32600|-32700|"statusCode":4\d\d/],
    ['a body over the limit', call('getBalance', { address: 'x'.repeat(70_000) }), /-32600|413|"statusCode":413|too large/i],
    ['a batch over JSONRPC_BATCH_LIMIT', JSON.stringify(Array.from({ length: 51 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getTokenInfo', params: {} }))), /-32600/],
  ];
  for (const [what, body, expected] of cases) {
    const answer = await postJson('/token', body);
    assert.ok(answer.status < 500, `${what}: ${answer.status} ${answer.text.slice(0, 300)}`);
    assert.match(answer.text, expected, `${what}: ${answer.text.slice(0, 300)}`);
    assert.doesNotMatch(answer.text, /at .+\.ts:\d+|node_modules/, `${what}: no stack trace`);
  }
  assert.equal((await p.t.platform.wallet.getBalance('ethereum', { address: victim.address })).balance, '5', 'the victim kept everything');

  // 40 batches of 50 calls at once, four times over: answered, and memory comes back down.
  const batch = JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'getTokenInfo', params: {} })));
  const before = rssMiB();
  for (let round = 0; round < 4; round++) {
    const answers = await Promise.all(Array.from({ length: 40 }, () => postJson('/token', batch)));
    for (const a of answers) assert.equal(JSON.parse(a.text).length, 50);
  }
  const grown = rssMiB() - before;
  assert.ok(grown < 256, `8000 batched calls grew the process by ${grown.toFixed(0)} MiB`);
  await stillServing();
});

test('REST pay: malformed, oversized and another user\'s requests move nothing and answer 4xx', async () => {
  const alice = await newUser(p, '10');
  const bob = await newUser(p, '10');
  const pay = (token: string, body: string, headers: Record<string, string> = {}) => postJson('/v1/ict/pay', body, { authorization: `Bearer ${token}`, ...headers });
  const good = { tokenName: 'VIXP', amount: '1', myAddress: alice.address, password };
  const paid = await pay(alice.token, JSON.stringify(good));
  assert.equal(paid.status, 200, paid.text);
  const aliceTx = JSON.parse(paid.text).resultData.transactionId as string;
  const cases: Array<[string, () => Promise<{ status: number; text: string }>, number]> = [
    ['bob pays from alice\'s address', () => pay(bob.token, JSON.stringify({ ...good, password })), 401],
    ['bob reads alice\'s payment', () => fetch(`${baseUrl}/v1/ict/pay/${aliceTx}`, { headers: { authorization: `Bearer ${bob.token}` } }).then(async (r) => ({ status: r.status, text: await r.text() })), 404],
    ['truncated JSON', () => pay(alice.token, '{"tokenName":"VIXP",'), 400],
    ['an array body', () => pay(alice.token, '[1,2,3]'), 400],
    ['a negative amount', () => pay(alice.token, JSON.stringify({ ...good, amount: '-1' })), 400],
    ['a zero amount', () => pay(alice.token, JSON.stringify({ ...good, amount: '0' })), 400],
    ['an amount as a number', () => pay(alice.token, JSON.stringify({ ...good, amount: 1 })), 400],
    ['a 1 MB password', () => pay(alice.token, JSON.stringify({ ...good, password: 'p'.repeat(1 << 20) })), 413],
    ['an Idempotency-Key of 10 KB', () => pay(alice.token, JSON.stringify(good), { 'idempotency-key': 'k'.repeat(10_000) }), 400],
    ['a form body', () => postJson('/v1/ict/pay', 'tokenName=VIXP', { authorization: `Bearer ${alice.token}`, 'content-type': 'application/x-www-form-urlencoded' }), 415],
  ];
  for (const [what, run, status] of cases) {
    const answer = await run();
    assert.equal(answer.status, status, `${what}: ${answer.text.slice(0, 300)}`);
    assert.doesNotMatch(answer.text, /at .+\.ts:\d+|node_modules/, `${what}: no stack trace`);
  }
  assert.equal((await p.t.platform.wallet.getBalance('ethereum', { address: alice.address })).balance, '9', 'alice paid once, her own payment');
  assert.equal((await p.t.platform.wallet.getBalance('ethereum', { address: bob.address })).balance, '10');
  await stillServing();
});

test('payment server: another store\'s objects, malformed fields and messages over the limit get a clear code; it keeps serving', async () => {
  const client = p.client;
  const user = await newUser(p, '50');
  await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '20' });
  // A payment and a reward of the first store.
  const uuid = randomUUID();
  const app = openSession(client, 'DoPayment', user.token);
  const pos = openSession(client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send(startPay(p, store.tid, `AB${randomUUID().slice(0, 6)}`, user, uuid, '3000'));
  const request = await app.next();
  await pos.next();
  app.send(await transferFor(p, user, request));
  const approved = await pos.next();
  assert.equal(approved.common.res_code, '00');
  const reward = (await unary(client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `abuse-${randomUUID()}`, exchange_amount: '1000' })).content;

  const unaryCases: Array<[string, string, string, Record<string, unknown>, string]> = [
    // what, call, API key, content, res_code
    ['another store cancels the payment', 'CancelPayment', otherStore.apiKey, { tid: otherStore.tid, transfer_transaction_id: approved.content.transfer_transaction_id }, '14'],
    ['another store cancels the reward', 'CancelReward', otherStore.apiKey, { reward_id: reward.reward_id }, '01'],
    ['another store issues a reward under this tid', 'IssueReward', otherStore.apiKey, { tid: store.tid, reward_reason: 'x', exchange_amount: '1000' }, '12'],
    ['a cancellation with an amount that is not a number', 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: approved.content.transfer_transaction_id, token_amount: 'all' }, '11'],
    ['a 200-character tran_no', 'CancelReward', store.apiKey, { reward_id: reward.reward_id, tran_no: 't'.repeat(200) }, '11'],
  ];
  for (const [what, method, key, content, code] of unaryCases) {
    const answer = await unary(client, method, key, content);
    assert.equal(answer.common.res_code, code, `${what}: ${JSON.stringify(answer.common)}`);
  }
  const claimAtOtherStore = openSession(client, 'StartPayment', otherStore.apiKey);
  claimAtOtherStore.send({ state: 'START_REWARD', tid: otherStore.tid, tran_no: 'AB-R', reward_id: reward.reward_id, token_amount: reward.token_amount, user_uuid: randomUUID() });
  const refused = await claimAtOtherStore.next();
  assert.notEqual(refused.common.res_code, '00', `another store's POS claims the reward: ${JSON.stringify(refused.common)}`);

  // Messages over GRPC_MAX_MESSAGE_BYTES: refused RESOURCE_EXHAUSTED on a unary call and on a stream.
  const big = 'x'.repeat(100_000);
  const overUnary = await unary(client, 'CancelReward', store.apiKey, { reward_id: big }).then(() => undefined, (error: grpc.ServiceError) => error);
  assert.equal(overUnary?.code, grpc.status.RESOURCE_EXHAUSTED);
  const overStream = openSession(client, 'StartPayment', store.apiKey);
  overStream.send({ state: 'START_PAY', tid: store.tid, tran_no: big });
  assert.equal((await overStream.closed).code, grpc.status.RESOURCE_EXHAUSTED);

  assert.equal((await p.t.platform.wallet.getBalance('ethereum', { address: user.address })).balance, '47', 'paid once, refunded nothing');
  const after = await unary(client, 'CancelPayment', store.apiKey, { tid: store.tid, transfer_transaction_id: approved.content.transfer_transaction_id });
  assert.equal(after.common.res_code, '00', 'the store itself still cancels its payment');
  await stillServing();
});

test('2000 idle HTTP connections: the server keeps serving others, with bounded memory', async () => {
  const { port } = new URL(baseUrl);
  const before = rssMiB();
  const sockets: Socket[] = [];
  try {
    for (let i = 0; i < 2000; i++) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', () => undefined);
      sockets.push(socket);
      // Half of them stop in the middle of their headers.
      if (i % 2 === 0) socket.write('POST /token HTTP/1.1\r\nHost: localhost\r\n');
    }
    await Promise.all(sockets.map((s) => (s.connecting ? once(s, 'connect') : undefined)));
    await stillServing();
    const grown = rssMiB() - before;
    assert.ok(grown < 256, `2000 idle connections grew the process by ${grown.toFixed(0)} MiB`);
  } finally {
    for (const s of sockets) s.destroy();
  }
  await waitFor(async () => (await fetch(`${baseUrl}/healthz`)).status === 200, { timeoutMs: 10_000, message: 'the server answers after they are gone' });
});

test('1000 silent payment streams over 10 connections from one peer: at most the per-client cap stay open, the rest are refused, the server keeps serving', async () => {
  const clients = Array.from({ length: 10 }, () => paymentsClient(p.server.port));
  const before = rssMiB();
  const calls: Array<grpc.ClientDuplexStream<any, any>> = [];
  try {
    const statuses = Array.from({ length: 1000 }, (_, i) => {
      const call: grpc.ClientDuplexStream<any, any> = clients[i % clients.length]!.DoPayment(new grpc.Metadata());
      calls.push(call);
      call.on('data', () => undefined);
      call.on('error', () => undefined);
      return new Promise<grpc.status>((resolve) => call.on('status', (status: grpc.StatusObject) => resolve(status.code)));
    });
    const cap = p.t.platform.config.grpcMaxStreamsPerClient;
    const refused = await waitFor(async () => {
      const settled = await Promise.all(statuses.map((s) => Promise.race([s, Promise.resolve(undefined)])));
      const count = settled.filter((code) => code === grpc.status.RESOURCE_EXHAUSTED).length;
      return count >= 1000 - cap ? count : undefined;
    }, { timeoutMs: 30_000, message: 'every stream beyond the cap is refused RESOURCE_EXHAUSTED', intervalMs: 100 });
    assert.ok(refused >= 1000 - cap);
    await stillServing();
    await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '1' });
    const issued = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `after-${randomUUID()}`, exchange_amount: '10' });
    assert.equal(issued.common.res_code, '00', 'a POS call still works');
    const grown = rssMiB() - before;
    assert.ok(grown < 256, `1000 streams grew the process by ${grown.toFixed(0)} MiB`);
  } finally {
    for (const call of calls) call.cancel();
    for (const client of clients) client.close();
  }
});
