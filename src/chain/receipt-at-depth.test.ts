import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { receiptAtDepth } from './receipt-at-depth.ts';
import { devAccount } from '../../test/support/chain-parts.ts';

// Whether a payment's transaction is final on the node (`CONFIRMATIONS` blocks), on a real anvil.
let anvil: AnvilProcess;
before(async () => { anvil = await startAnvil({ chainId: foundry.id, port: 0 }); });
after(async () => { await anvil?.stop(); });

const client = () => createPublicClient({ chain: foundry, transport: http(anvil.url) });
const mine = () => client().request({ method: 'evm_mine' as never, params: [] as never });
const wallet = () => createWalletClient({ account: devAccount(1), chain: foundry, transport: http(anvil.url) });

// Init code deploying a contract whose every call reverts (runtime: PUSH1 0, PUSH1 0, REVERT).
const alwaysReverts: Hex = '0x6005600c60003960056000f360006000fd';

test('a successful transaction is final once its block and the blocks on top of it count the confirmations asked, as each new block comes', async () => {
  // One client for the whole test: a head it read before a block was mined is not taken for the head after.
  const node = client();
  const hash = await wallet().sendTransaction({ to: devAccount(9).address, value: 1n });
  await node.waitForTransactionReceipt({ hash });
  assert.equal(await receiptAtDepth(node, hash, 1), true, 'its own block is one');
  assert.equal(await receiptAtDepth(node, hash, 0), true);
  assert.equal(await receiptAtDepth(node, hash, 2), false);
  await mine();
  assert.equal(await receiptAtDepth(node, hash, 2), true, 'one block on top');
  assert.equal(await receiptAtDepth(node, hash, 3), false);
  await mine();
  assert.equal(await receiptAtDepth(node, hash, 3), true);
});

test('a reverted transaction is never final, however deep; nor one the node does not have; nor any while the node does not answer', async () => {
  const node = client();
  const deploy = await node.waitForTransactionReceipt({ hash: await wallet().deployContract({ abi: [], bytecode: alwaysReverts }) });
  const hash = await wallet().sendTransaction({ to: deploy.contractAddress as Hex, data: '0x', gas: 100_000n });
  assert.equal((await node.waitForTransactionReceipt({ hash })).status, 'reverted');
  await mine();
  assert.equal(await receiptAtDepth(node, hash, 1), false);
  assert.equal(await receiptAtDepth(node, `0x${'ab'.repeat(32)}`, 1), false);
  const mined = await wallet().sendTransaction({ to: devAccount(9).address, value: 1n });
  await node.waitForTransactionReceipt({ hash: mined });
  const down = createPublicClient({ chain: foundry, transport: http('http://127.0.0.1:9', { retryCount: 0 }) });
  assert.equal(await receiptAtDepth(down, mined, 1), false);
});
