import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, keccak256, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil } from './anvil-process.ts';
import { createEndpointPool } from './endpoint-pool.ts';
import { startRpcProxy } from '../../test/support/rpc-proxy.ts';

const sender = mnemonicToAccount('test test test test test test test test test test test junk');

async function twoEndpoints() {
  const anvil = await startAnvil({ chainId: foundry.id });
  const first = await startRpcProxy(anvil.url);
  const second = await startRpcProxy(anvil.url);
  const called = () => [first, second].map((p) => [...p.calls.values()].reduce((a, b) => a + b, 0));
  return {
    anvil, first, second, called,
    close: async () => {
      await first.close();
      await second.close();
      await anvil.stop();
    },
  };
}

const clientOf = (pool: ReturnType<typeof createEndpointPool>) => createPublicClient({ chain: foundry, transport: pool.transport }) as PublicClient;

test('calls go to the first endpoint; one failing or throttled is left aside and the next one answers, then the first again once it is back', async () => {
  const nodes = await twoEndpoints();
  try {
    let clock = Date.now();
    const pool = createEndpointPool({ network: 'ethereum', urls: [nodes.first.url, nodes.second.url], callTimeoutMs: 5_000, now: () => clock });
    const client = clientOf(pool);
    assert.equal(await client.getChainId(), foundry.id);
    assert.deepEqual(nodes.called(), [1, 0], 'the preferred endpoint alone while it answers');

    nodes.first.down = true;
    assert.equal(await client.getBlockNumber({ cacheTime: 0 }), 0n, 'answered by the second');
    const [first, second] = pool.states();
    assert.equal(first?.status, 'failing');
    assert.ok((first?.outUntil ?? 0) > clock, 'left aside for a while');
    assert.equal(second?.status, 'up');
    const refusedOnce = nodes.first.refused;
    await client.getBlockNumber({ cacheTime: 0 });
    assert.equal(nodes.first.refused, refusedOnce, 'while it is aside, the failing endpoint is not asked');
    // Back, and its time aside over: the preferred one answers again.
    nodes.first.down = false;
    clock += 61_000;
    const before = nodes.called();
    await client.getBlockNumber({ cacheTime: 0 });
    assert.deepEqual(nodes.called().map((n, i) => n - (before[i] ?? 0)), [1, 0]);
    assert.equal(pool.states()[0]?.status, 'up');

    // Throttled with a Retry-After: aside for that long, the call answered by the next endpoint.
    const throttling = createEndpointPool({ network: 'ethereum', urls: [nodes.first.url, nodes.second.url], callTimeoutMs: 5_000 });
    nodes.first.throttle = { every: 1, retryAfterSeconds: 30, as: 'http' };
    await clientOf(throttling).getBlockNumber({ cacheTime: 0 });
    const throttled = throttling.states()[0];
    assert.equal(throttled?.status, 'throttled');
    assert.ok((throttled?.outUntil ?? 0) - Date.now() > 25_000, 'aside for its Retry-After');
    assert.equal(throttled?.throttled, 1);
    assert.equal(throttling.states()[1]?.calls, 1);
  } finally {
    await nodes.close();
  }
});

test('every endpoint throttled: the call waits as Retry-After (or −32005) says when that ends within its deadline, and fails at once when it does not', async () => {
  const nodes = await twoEndpoints();
  try {
    nodes.first.throttle = { every: 2, retryAfterSeconds: 1, as: 'http' };
    nodes.second.throttle = { every: 1, retryAfterSeconds: 1, as: 'jsonrpc' };
    const pool = createEndpointPool({ network: 'ethereum', urls: [nodes.first.url, nodes.second.url], callTimeoutMs: 5_000 });
    const client = clientOf(pool);
    await client.getBlockNumber({ cacheTime: 0 }); // the first's first request passes
    // The first's second request is throttled, the second's every one: both are aside for 1 s; the call waits and the first answers it.
    assert.equal(await client.getBlockNumber({ cacheTime: 0 }), 0n);
    assert.deepEqual(pool.states().map((s) => s.throttled), [1, 1]);
    assert.equal(pool.states()[0]?.status, 'up', 'the first answered after its wait');

    nodes.first.throttle = { every: 1, retryAfterSeconds: 60, as: 'http' };
    nodes.second.throttle = { every: 1, retryAfterSeconds: 60, as: 'jsonrpc' };
    const short = createEndpointPool({ network: 'ethereum', urls: [nodes.first.url, nodes.second.url], callTimeoutMs: 2_000 });
    const started = performance.now();
    await assert.rejects(clientOf(short).getBlockNumber({ cacheTime: 0 }));
    assert.ok(performance.now() - started < 2_000, 'a wait past the deadline is not waited');
    assert.deepEqual(short.states().map((s) => s.status), ['throttled', 'throttled']);
  } finally {
    await nodes.close();
  }
});

test('a node\'s own JSON-RPC answer (a refusal, "method not found") is the call\'s answer, not a reason to ask another endpoint', async () => {
  const anvil = await startAnvil({ chainId: foundry.id });
  const first = await startRpcProxy(anvil.url, { lacking: ['eth_getBlockReceipts'] });
  const second = await startRpcProxy(anvil.url);
  try {
    const pool = createEndpointPool({ network: 'ethereum', urls: [first.url, second.url], callTimeoutMs: 5_000 });
    await assert.rejects(clientOf(pool).request({ method: 'eth_getBlockReceipts', params: ['latest'] }), /does not exist/);
    assert.equal(second.calls.size, 0);
    assert.equal(pool.states()[0]?.status, 'up');
  } finally {
    await first.close();
    await second.close();
    await anvil.stop();
  }
});

test('a raw transaction sent again through another endpoint is the same signed bytes: one hash, one transaction', async () => {
  const nodes = await twoEndpoints();
  try {
    const pool = createEndpointPool({ network: 'ethereum', urls: [nodes.first.url, nodes.second.url], callTimeoutMs: 5_000 });
    const client = clientOf(pool);
    const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(nodes.anvil.url) });
    await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    const raw = await wallet.signTransaction(await wallet.prepareTransactionRequest({ to: sender.address, value: 1n }));
    const hash = await client.sendRawTransaction({ serializedTransaction: raw });
    assert.equal(hash, keccak256(raw));
    // The first endpoint fails (it took the transaction, its answer lost): sent again at the second.
    nodes.first.down = true;
    const again = await client.sendRawTransaction({ serializedTransaction: raw }).then((h) => h, (error: Error) => error.message);
    assert.ok(again === hash || /already|known/i.test(again), `the second endpoint took it as the same transaction: ${again}`);
    assert.equal(nodes.second.calls.get('eth_sendRawTransaction'), 1);
    nodes.first.down = false;
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    const block = await client.getBlock({ blockNumber: 1n });
    assert.deepEqual(block.transactions, [hash], 'mined once');
    assert.equal(await client.getTransactionCount({ address: sender.address }), 1);
  } finally {
    await nodes.close();
  }
});
