import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import type { AnvilProcess } from '../src/chain/anvil-process.ts';
import { startExternalNode } from './support/external-node.ts';
import { startRpcProxy, type RpcProxy } from './support/rpc-proxy.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';

// The payment network on the operator's node, reached through two endpoints (RPC_URLS_ETHEREUM), the
// first a provider that throttles every third request and fails for a while in the middle of a burst.
let node: AnvilProcess;
let first: RpcProxy;
let second: RpcProxy;
let t: TestPlatform;

before(async () => {
  let relayerKey: string;
  ({ node, relayerKey } = await startExternalNode({ blockSeconds: 1 }));
  first = await startRpcProxy(node.url);
  second = await startRpcProxy(node.url);
  t = await startTestPlatform({ env: { RPC_URLS_ETHEREUM: `${first.url},${second.url}`, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey } });
});
after(async () => {
  await t?.stop();
  await first?.close();
  await second?.close();
  await node?.stop();
});

interface Account { address: string; secretKey: string }

test('RPC_URLS_ETHEREUM: the transfers land on the operator\'s node; throttled and failing at the first endpoint, each is answered settled, once, never 500', async () => {
  const { platform } = t;
  const ethereum = platform.chains.ethereum;
  assert.equal(ethereum.managed, false, 'no anvil of the platform\'s own for a network given endpoints');
  assert.deepEqual(ethereum.urls, [first.url, second.url]);

  const count = 24;
  const senders: Account[] = [];
  for (let i = 0; i < count; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await Promise.all(senders.map((sender) => platform.wallet.mint('ethereum', { to: sender.address, amount: '5' })));
  const prepared = await Promise.all(senders.map(async (sender) => {
    const { data: _data, ...params } = await prepareTransfer(t.app, sender, receiver.address, '1');
    return params;
  }));

  first.throttle = { every: 3, retryAfterSeconds: 1, as: 'http' };
  const answers = await Promise.all(prepared.map(async (params, i) => {
    await new Promise((resolve) => setTimeout(resolve, i * 100));
    // A third of the way in, the first endpoint fails for a while.
    if (i === Math.floor(count / 3)) {
      first.down = true;
      setTimeout(() => { first.down = false; }, 2_000);
    }
    return call(t.app, '/token', 'transfer', params);
  }));
  first.throttle = undefined;

  for (const answer of answers) assert.notEqual(answer.resultCode, '500', JSON.stringify(answer));
  const settled = answers.filter((a) => a.resultCode === '200');
  assert.equal(settled.length, count, `every transfer settled: ${JSON.stringify(answers.filter((a) => a.resultCode !== '200'))}`);
  assert.ok(first.refused > 0, 'the first endpoint did throttle and fail');

  // On the operator's node itself: each transfer once (the receiver holds exactly what was answered).
  const direct = createPublicClient({ chain: foundry, transport: http(node.url) });
  for (const hash of new Set(settled.map((a) => a.TransactionID as Hex))) {
    assert.equal((await direct.getTransactionReceipt({ hash })).status, 'success');
  }
  assert.equal((await call(t.app, '/token', 'getBalance', { address: receiver.address })).resultData.balance, String(count));

  // /readyz names each endpoint's state and calls; /metrics counts each endpoint's calls by outcome.
  const ready = (await t.app.inject({ method: 'GET', url: '/readyz' })).json();
  const endpoints = ready.endpoints.ethereum as Array<{ endpoint: number; host: string; status: string; calls: number; throttled: number; failed: number }>;
  assert.deepEqual(endpoints.map((e) => e.endpoint), [0, 1]);
  assert.equal(endpoints[0]?.host, new URL(first.url).host);
  assert.ok(endpoints[0]!.throttled + endpoints[0]!.failed > 0 && endpoints[1]!.calls > 0, JSON.stringify(endpoints));
  assert.ok(!('endpoints' in ready && 'bnb' in ready.endpoints), 'a network we run has no endpoints to name');
  const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
  assert.match(metrics, /vixpay_node_endpoint_calls_total\{network="ethereum",endpoint="0",host="[^"]+",outcome="throttled"\} [1-9]/);
  assert.match(metrics, /vixpay_node_endpoint_calls_total\{network="ethereum",endpoint="1",host="[^"]+",outcome="ok"\} [1-9]/);
});
