import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, type Hex, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createBlockReceipts } from './block-receipts.ts';
import { startRpcProxy, type RpcProxy } from '../../test/support/rpc-proxy.ts';

// How the receipt watcher reads receipts, on a real anvil: a block's all in one eth_getBlockReceipts
// call; on a node without that method (anvil behind a proxy that answers "method not found", as
// Hardhat's node does), the receipts of the hashes still waited for, one call each, from then on.
let anvil: AnvilProcess;
let node: RpcProxy;
let lacking: RpcProxy;
before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  node = await startRpcProxy(anvil.url);
  lacking = await startRpcProxy(anvil.url, { lacking: ['eth_getBlockReceipts'] });
  // Blocks are mined when a test says so: each test knows what its blocks hold.
  await chain().request({ method: 'evm_setAutomine' as never, params: [false] as never });
});
after(async () => {
  await node?.close();
  await lacking?.close();
  await anvil?.stop();
});

const chain = (url = anvil.url): PublicClient => createPublicClient({ chain: foundry, transport: http(url) });
const payers = [0, 1].map((addressIndex) => mnemonicToAccount('test test test test test test test test test test test junk', { addressIndex }));
const unknown: Hex = `0x${'ab'.repeat(32)}`;

/** A block mined with `count` transfers (from two payers): its number and their hashes, in order. */
async function mineBlock(count: number): Promise<{ block: bigint; hashes: Hex[] }> {
  const reader = chain();
  const hashes: Hex[] = [];
  for (let i = 0; i < count; i++) {
    const account = payers[i % 2]!;
    const wallet = createWalletClient({ account, chain: foundry, transport: http(anvil.url) });
    const nonce = await reader.getTransactionCount({ address: account.address, blockTag: 'pending' });
    hashes.push(await wallet.sendTransaction({ to: payers[(i + 1) % 2]!.address, value: BigInt(1_000 + i), nonce }));
  }
  await reader.request({ method: 'evm_mine' as never, params: [] as never });
  return { block: await reader.getBlockNumber({ cacheTime: 0 }), hashes };
}

const receiptsOf = (hashes: Hex[]) => Promise.all(hashes.map((hash) => chain().getTransactionReceipt({ hash })));
const callsOf = (proxy: RpcProxy, method: string) => proxy.calls.get(method) ?? 0;
const notAsked = (): Hex[] => { throw new Error('the hashes waited for are not needed where the node gives a block\'s receipts'); };

test('a block\'s receipts, the head block\'s too, come in one eth_getBlockReceipts call each, as viem reads them one by one', async () => {
  const receipts = createBlockReceipts(chain(node.url));
  const older = await mineBlock(2);
  const head = await mineBlock(3);
  assert.equal(head.block, await chain().getBlockNumber({ cacheTime: 0 }), 'the block just mined is the head');
  const before = { block: callsOf(node, 'eth_getBlockReceipts'), one: callsOf(node, 'eth_getTransactionReceipt') };

  const ofHead = await receipts.ofBlock(head.block, notAsked);
  assert.deepEqual(ofHead, await receiptsOf(head.hashes));
  assert.deepEqual(ofHead.map((r) => [r.blockNumber, r.status]), head.hashes.map(() => [head.block, 'success']));
  assert.deepEqual(await receipts.ofBlock(older.block, notAsked), await receiptsOf(older.hashes));

  assert.equal(callsOf(node, 'eth_getBlockReceipts') - before.block, 2, 'one call per block');
  assert.equal(callsOf(node, 'eth_getTransactionReceipt') - before.one, 0, 'none per transaction');
});

test('an empty block and a block not mined yet have no receipts; the node is asked for the next block\'s all the same', async () => {
  const receipts = createBlockReceipts(chain(node.url));
  const empty = await mineBlock(0);
  assert.deepEqual(await receipts.ofBlock(empty.block, notAsked), []);
  assert.deepEqual(await receipts.ofBlock(empty.block + 5n, notAsked), [], 'a block above the head: none yet');
  const before = callsOf(node, 'eth_getBlockReceipts');
  const next = await mineBlock(1);
  assert.deepEqual(await receipts.ofBlock(next.block, notAsked), await receiptsOf(next.hashes));
  assert.equal(callsOf(node, 'eth_getBlockReceipts') - before, 1, 'still read by block after a block without receipts');
});

test('a node without eth_getBlockReceipts: the receipts of the hashes waited for, and that method never asked again', async () => {
  const receipts = createBlockReceipts(chain(lacking.url));
  const first = await mineBlock(3);
  const second = await mineBlock(2);
  const asked = () => callsOf(lacking, 'eth_getBlockReceipts');
  const start = asked();

  // Only the hashes still waited for; one the node does not know is left out.
  const waited = [first.hashes[2]!, unknown, first.hashes[0]!];
  assert.deepEqual(await receipts.ofBlock(first.block, () => waited), await receiptsOf([first.hashes[2]!, first.hashes[0]!]));
  assert.equal(asked() - start, 1, 'asked once, refused');

  const one = callsOf(lacking, 'eth_getTransactionReceipt');
  assert.deepEqual(await receipts.ofBlock(second.block, () => [second.hashes[1]!]), await receiptsOf([second.hashes[1]!]));
  assert.equal(asked() - start, 1, 'not asked again after the refusal');
  assert.equal(callsOf(lacking, 'eth_getTransactionReceipt') - one, 1, 'one call per hash waited for');
  assert.deepEqual(await receipts.ofBlock(second.block, () => []), [], 'nothing waited for: nothing read');
});

test('receipts looked up by hash: those mined, in the order asked, any the node does not know left out', async () => {
  const receipts = createBlockReceipts(chain(node.url));
  const { hashes } = await mineBlock(2);
  assert.deepEqual(await receipts.lookUp([hashes[1]!, unknown, hashes[0]!]), await receiptsOf([hashes[1]!, hashes[0]!]));
  assert.deepEqual(await receipts.lookUp([unknown]), []);
  assert.deepEqual(await receipts.lookUp([]), []);
});
