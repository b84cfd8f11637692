import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestClient, createWalletClient, http } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createChainClients, type ChainClient } from './chain-clients.ts';
import type { ChainEndpoint } from './chain-supervisor.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import { startTcpProxy, type TcpProxy } from '../../test/chaos/tcp-proxy.ts';
import { startRpcProxy, type RpcProxy } from '../../test/support/rpc-proxy.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// A node the platform does not run, with its WebSocket given (WS_URL_<NETWORK>), on a real anvil
// mining a block a second: the receipt watcher follows the heads it pushes (no eth_blockNumber
// asked while the subscription is up, receipts read by block), falls back to polling when the
// socket is cut (a TCP link that resets every connection), and stops polling once it is made again.
let anvil: AnvilProcess;
let link: TcpProxy;
let rpc: RpcProxy;
let chain: ChainClient;
const calls = new Map<string, number>();
const count = (method: string) => calls.get(method) ?? 0;
const sender = mnemonicToAccount('test test test test test test test test test test test junk');

before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0, blockTime: 1 });
  const { hostname, port } = new URL(anvil.url);
  link = await startTcpProxy({ host: hostname, port: Number(port) });
  rpc = await startRpcProxy(anvil.url);
  const endpoint: ChainEndpoint = { network: 'ethereum', url: rpc.url, chainId: foundry.id, managed: false, wsUrl: `ws://127.0.0.1:${link.port}` };
  const endpoints = Object.fromEntries(networkNames.map((network) => [network, network === 'ethereum' ? endpoint : { ...endpoint, network, wsUrl: undefined }])) as unknown as Record<NetworkName, ChainEndpoint>;
  const chains = await createChainClients(endpoints, 50, {}, (network, method) => {
    if (network === 'ethereum') calls.set(method, count(method) + 1);
  });
  chain = chains.ethereum;
  for (const network of networkNames) if (network !== 'ethereum') chains[network].receipts.close();
});
after(async () => {
  chain?.receipts.close();
  await link?.close();
  await rpc?.close();
  await anvil?.stop();
});

const wallet = () => createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });

/** A transfer sent straight to the node, and the watcher's wait for it. */
async function sentAndWaited(): Promise<void> {
  const hash = await wallet().sendTransaction({ to: sender.address, value: 1n });
  const receipt = await chain.receipts.wait(hash, 30_000);
  assert.equal(receipt.transactionHash, hash);
}

test('while the subscription is up, receipts follow the pushed heads: no head asked, each block\'s receipts read once, none by transaction', async () => {
  await waitFor(() => chain.heads?.up() === true, { timeoutMs: 10_000, message: 'the subscription is made' });
  await waitFor(() => chain.heads?.latest() !== undefined, { timeoutMs: 10_000, message: 'a head is pushed' });
  const before = { heads: count('eth_blockNumber'), byBlock: count('eth_getBlockReceipts'), byTx: count('eth_getTransactionReceipt') };
  for (let i = 0; i < 3; i++) await sentAndWaited();
  assert.equal(count('eth_blockNumber'), before.heads, 'no eth_blockNumber while heads are pushed');
  assert.equal(count('eth_getTransactionReceipt'), before.byTx, 'no receipt read by transaction');
  assert.ok(count('eth_getBlockReceipts') > before.byBlock, 'receipts read by block');
  // The pushed header carries the block's time and base fee.
  const head = chain.heads?.latest();
  assert.ok(head && head.timestamp > 0n && head.baseFeePerGas !== null);
  assert.equal(chain.heads?.byHash(head.hash)?.number, head.number);
  assert.equal(count('eth_subscribe'), 1);
  // Fees from the pushed header: the latest block is not asked, the tip once for several sends.
  const asked = { blocks: count('eth_getBlockByNumber'), tips: count('eth_maxPriorityFeePerGas') };
  for (let i = 0; i < 3; i++) {
    const fees = await chain.client.estimateFeesPerGas();
    assert.ok(fees.maxFeePerGas > 0n);
  }
  assert.equal(count('eth_getBlockByNumber'), asked.blocks, 'the latest block is the header pushed');
  assert.equal(count('eth_maxPriorityFeePerGas'), asked.tips + 1, 'the tip asked once for three estimates');
});

test('the subscription cut: the watcher polls meanwhile and receipts still come; made again, polling stops', async () => {
  link.set({ kind: 'cut' });
  await waitFor(() => chain.heads?.up() === false, { timeoutMs: 10_000, message: 'the subscription is seen down' });
  const polledFrom = count('eth_blockNumber');
  await sentAndWaited();
  assert.ok(count('eth_blockNumber') > polledFrom, 'heads polled while the subscription is down');

  link.set({ kind: 'pass' });
  await waitFor(() => chain.heads?.up() === true, { timeoutMs: 60_000, message: 'the subscription is made again' });
  assert.ok((chain.heads?.subscriptions() ?? 0) >= 2);
  await waitFor(() => (chain.heads?.latest()?.at ?? 0) > Date.now() - 1_500, { timeoutMs: 10_000, message: 'heads pushed again' });
  // A poll already scheduled when it came up may still run: from the next wait on, none.
  await sentAndWaited();
  const after = count('eth_blockNumber');
  for (let i = 0; i < 2; i++) await sentAndWaited();
  assert.equal(count('eth_blockNumber'), after, 'no eth_blockNumber once the subscription is back');
});

test('a node without eth_getBlockReceipts: receipts are read by transaction instead, pushed heads still drive them', async () => {
  const lacking = await startRpcProxy(anvil.url, { lacking: ['eth_getBlockReceipts'] });
  const own = new Map<string, number>();
  try {
    const endpoint: ChainEndpoint = { network: 'ethereum', url: lacking.url, chainId: foundry.id, managed: false, wsUrl: `ws://127.0.0.1:${link.port}` };
    const endpoints = Object.fromEntries(networkNames.map((network) => [network, network === 'ethereum' ? endpoint : { ...endpoint, network, wsUrl: undefined }])) as unknown as Record<NetworkName, ChainEndpoint>;
    const chains = await createChainClients(endpoints, 50, {}, (network, method) => {
      if (network === 'ethereum') own.set(method, (own.get(method) ?? 0) + 1);
    });
    try {
      await waitFor(() => chains.ethereum.heads?.up() === true && chains.ethereum.heads.latest() !== undefined, { timeoutMs: 10_000, message: 'heads pushed' });
      for (let i = 0; i < 2; i++) {
        const hash = await wallet().sendTransaction({ to: sender.address, value: 1n });
        assert.equal((await chains.ethereum.receipts.wait(hash, 30_000)).transactionHash, hash);
      }
      assert.equal(lacking.calls.get('eth_getBlockReceipts'), 1, 'asked once, then known missing');
      assert.ok((own.get('eth_getTransactionReceipt') ?? 0) >= 1, 'read by transaction instead');
      assert.equal(own.get('eth_blockNumber') ?? 0, 0, 'no head asked');
    } finally {
      for (const network of networkNames) chains[network].receipts.close();
    }
  } finally {
    await lacking.close();
  }
});

test('the chain goes back and grows past its old head before anyone looks: the heads pushed count it once; blocks that follow their parent count nothing', async () => {
  const heads = chain.heads!;
  await waitFor(() => heads.up() && (heads.latest()?.at ?? 0) > Date.now() - 1_500, { timeoutMs: 60_000, message: 'heads pushed' });
  const node = createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.url) });
  const counted = heads.wentBack();
  const snapshot = await node.snapshot();
  const at = heads.latest()!.number;
  await waitFor(() => heads.latest()!.number >= at + 2n, { timeoutMs: 10_000, message: 'two more heads pushed' });
  assert.equal(heads.wentBack(), counted, 'each head followed its parent');
  await node.revert({ id: snapshot });
  const top = heads.latest()!.number;
  await waitFor(() => heads.latest()!.number > top, { timeoutMs: 15_000, message: 'grown past the old head' });
  assert.equal(heads.wentBack(), counted + 1);
});
