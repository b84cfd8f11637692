import { test } from 'node:test';
import assert from 'node:assert/strict';
import { call } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { assertEachSettledOnce, fundedSenders, useTwoEndpoints } from './support/two-endpoints.ts';

// The payment network on the operator's node, reached through two endpoints (RPC_URLS_ETHEREUM), the
// first a provider that throttles every third request and fails for a while in the middle of a burst.
const rig = useTwoEndpoints();

test('RPC_URLS_ETHEREUM: the transfers land on the operator\'s node; throttled and failing at the first endpoint, each is answered settled, once, never 500', async () => {
  const { t, first, second } = rig;
  const ethereum = t.platform.chains.ethereum;
  assert.equal(ethereum.managed, false, 'no anvil of the platform\'s own for a network given endpoints');
  assert.deepEqual(ethereum.urls, [first.url, second.url]);

  const count = 24;
  const { senders, receiver } = await fundedSenders(rig, count);
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

  // Every transfer settled, none 500; on the operator's node itself each transfer once (the receiver
  // holds exactly what was answered).
  await assertEachSettledOnce(rig, answers, receiver, count);

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
