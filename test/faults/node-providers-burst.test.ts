import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import type { AnvilProcess } from '../../src/chain/anvil-process.ts';
import { startExternalNode } from '../support/external-node.ts';
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.ts';
import { call, startTestPlatform, type TestPlatform } from '../support/platform.ts';
import { prepareTransfer } from '../support/transfer-scheme.ts';

// The operator's check of issue 39, as worded (test/node-providers.test.ts is its short form): the
// payment network on the operator's node through two endpoints (RPC_URLS_ETHEREUM), the first a
// provider answering 429 to every third request and failing for 20 s in the middle of a 60 s burst of
// transfers (2 a second): every transfer answered settled, each on chain once, none 500.
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

test('two endpoints, the first throttling every third request and down 20 s in the middle of a 60 s burst: 120 transfers each answered settled, once, never 500', async () => {
  const { platform } = t;
  const count = 120;
  const perSender = 2;
  const senders: Account[] = [];
  for (let i = 0; i < count / perSender; i++) senders.push((await call(t.app, '/token', 'createAddress', {})).resultData as Account);
  const receiver = (await call(t.app, '/token', 'createAddress', {})).resultData as Account;
  await Promise.all(senders.map((sender) => platform.wallet.mint('ethereum', { to: sender.address, amount: '5' })));
  const prepared = [];
  for (let round = 0; round < perSender; round++) {
    for (const sender of senders) {
      const { data: _data, ...params } = await prepareTransfer(t.app, sender, receiver.address, '1');
      prepared.push(params);
    }
  }

  first.throttle = { every: 3, retryAfterSeconds: 1, as: 'http' };
  const started = Date.now();
  const answers = await Promise.all(prepared.map(async (params, i) => {
    // 2 a second, whatever the answers' pace.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + i * 500 - Date.now())));
    // From 20 s to 40 s in, the first endpoint fails every request.
    if (i === 40) {
      first.down = true;
      setTimeout(() => { first.down = false; }, 20_000);
    }
    return call(t.app, '/token', 'transfer', params);
  }));
  first.throttle = undefined;

  for (const answer of answers) assert.notEqual(answer.resultCode, '500', JSON.stringify(answer));
  const settled = answers.filter((a) => a.resultCode === '200');
  assert.equal(settled.length, count, `every transfer settled: ${JSON.stringify(answers.filter((a) => a.resultCode !== '200').slice(0, 3))}`);
  assert.ok(first.refused > 0, 'the first endpoint did throttle and fail');
  const direct = createPublicClient({ chain: foundry, transport: http(node.url) });
  for (const hash of new Set(settled.map((a) => a.TransactionID as Hex))) {
    assert.equal((await direct.getTransactionReceipt({ hash })).status, 'success');
  }
  // None lost, none doubled: the receiver holds exactly one per transfer answered.
  assert.equal((await call(t.app, '/token', 'getBalance', { address: receiver.address })).resultData.balance, String(count));
});
