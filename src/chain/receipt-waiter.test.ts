import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, keccak256, type Address, type Hex, type LocalAccount } from 'viem';
import { foundry } from 'viem/chains';
import { createReceiptWaiter, type ReceiptWaiterDeps } from './receipt-waiter.ts';
import { createTransactionSender } from './transaction-sender.ts';
import type { MinedCost } from './relay-types.ts';
import { createLogger } from '#shared/logger.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';

// The receipt waiter on a real anvil: it records in the journal what became of each transaction.
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: false }); });
after(async () => { await parts?.close(); });

const logger = createLogger('silent');
const setAutomine = (on: boolean) => parts.chains.ethereum.client.request({ method: 'evm_setAutomine' as never, params: [on] as never });
const mine = () => parts.chains.ethereum.client.request({ method: 'evm_mine' as never, params: [] as never });
const waiterWith = (deps: Partial<ReceiptWaiterDeps> = {}) =>
  createReceiptWaiter({ journal: parts.journal, chains: parts.chains, clock: Date.now, logger, receiptTimeoutMs: 10_000, ...deps });

/** A transaction of `account` with a fixed gas limit, journaled and broadcast (a call that reverts is sent too). */
async function journaledAndSent(account: LocalAccount, call: { to?: Address; data: Hex }) {
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  const fees = await sender.fees('ethereum', account.address);
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, fees, () => ({ to: call.to, data: call.data, gas: 200_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  await sender.broadcast('ethereum', journaled.rawTx);
  return journaled;
}

// Init code deploying a contract whose every call reverts (runtime: PUSH1 0, PUSH1 0, REVERT).
const alwaysReverts: Hex = '0x6005600c60003960056000f360006000fd';

test('a mined transaction is recorded with its cost: confirmed when it succeeded, failed when it reverted', async () => {
  const mined: MinedCost[] = [];
  const waiter = waiterWith({ onMined: (_, cost) => mined.push(cost) });
  const account = devAccount(1);
  const deploy = await journaledAndSent(account, { data: alwaysReverts });
  const deployed = await waiter.finish('ethereum', deploy.id, [deploy.txHash]);
  assert.equal(deployed.status, 'confirmed');
  assert.equal(deployed.txHash, deploy.txHash);
  const call = await journaledAndSent(account, { to: deployed.receipt?.contractAddress as Address, data: '0x' });
  const reverted = await waiter.finish('ethereum', call.id, [call.txHash]);
  assert.equal(reverted.status, 'failed');
  assert.equal(reverted.receipt?.status, 'reverted');
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), [], 'both recorded mined');
  assert.deepEqual(mined.map((cost) => [cost.blockNumber, cost.gasUsed, cost.transfers]),
    [[deployed.receipt?.blockNumber, deployed.receipt?.gasUsed, 0], [reverted.receipt?.blockNumber, reverted.receipt?.gasUsed, 0]]);
});

test('a transaction not mined within the wait is answered `signed` and stays journaled; once mined, a later wait records it', async () => {
  const account = devAccount(2);
  await setAutomine(false);
  try {
    const tx = await journaledAndSent(account, { to: devAccount(9).address, data: '0x' });
    const waiter = waiterWith();
    assert.deepEqual(await waiter.finish('ethereum', tx.id, [tx.txHash], 300), { txHash: tx.txHash, status: 'signed' });
    assert.deepEqual((await parts.journal.listUnmined('ethereum', account.address)).map((u) => u.txHash), [tx.txHash]);
    await mine();
    assert.equal((await waiter.finish('ethereum', tx.id, [tx.txHash])).status, 'confirmed');
    assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  } finally {
    await setAutomine(true);
  }
});

test('a version re-priced while the wait runs is waited for too, and the version mined is the one answered', async () => {
  const account = devAccount(3);
  await setAutomine(false);
  try {
    const first = await journaledAndSent(account, { to: devAccount(9).address, data: '0x' });
    const waiter = waiterWith();
    const waited = waiter.finish('ethereum', first.id, [first.txHash]);
    // The same nonce signed again with higher fees (as reprice-stale.ts does), journaled, then sent.
    const { client, chainId } = parts.chains.ethereum;
    const previous = await client.getTransaction({ hash: first.txHash });
    const rawTx = await account.signTransaction({
      chainId, type: 'eip1559', nonce: previous.nonce, to: devAccount(9).address, data: '0x', value: 0n, gas: 200_000n,
      maxFeePerGas: (previous.maxFeePerGas ?? 0n) * 2n, maxPriorityFeePerGas: (previous.maxPriorityFeePerGas ?? 0n) * 2n,
    });
    const txHash = keccak256(rawTx);
    assert.ok(await parts.journal.replace(first.id, first.txHash, { rawTx, txHash }, Date.now()));
    waiter.repriced(first.id, txHash);
    await client.sendRawTransaction({ serializedTransaction: rawTx });
    await mine();
    const result = await waited;
    assert.equal(result.status, 'confirmed');
    assert.equal(result.txHash, txHash, 'answered by the re-priced version, the one mined');
    assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  } finally {
    await setAutomine(true);
  }
});

test('a transaction whose nonce another transaction took is recorded failed, never to be sent again', async () => {
  const account = devAccount(4);
  await setAutomine(false);
  try {
    const tx = await journaledAndSent(account, { to: devAccount(9).address, data: '0x' });
    const waited = waiterWith().finish('ethereum', tx.id, [tx.txHash]);
    // The wait sees it pending (its sender and nonce learnt), then another transaction of that nonce is mined.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const { client } = parts.chains.ethereum;
    const pending = await client.getTransaction({ hash: tx.txHash });
    const wallet = createWalletClient({ account, chain: foundry, transport: http(parts.anvil.url) });
    const other = await wallet.sendTransaction({
      to: account.address, value: 0n, nonce: pending.nonce, gas: 21_000n,
      maxFeePerGas: (pending.maxFeePerGas ?? 0n) * 2n, maxPriorityFeePerGas: (pending.maxPriorityFeePerGas ?? 0n) * 2n,
    });
    await mine();
    assert.equal((await client.getTransactionReceipt({ hash: other })).status, 'success');
    assert.deepEqual(await waited, { txHash: tx.txHash, status: 'failed' });
    assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), [], 'no longer left for recovery');
  } finally {
    await setAutomine(true);
  }
});

test('on a chain we run, each wait starts the injected nudge and stops it once answered; on a node we do not run, none', async () => {
  const nudged: string[] = [];
  const nudge = (_: unknown, hash: Hex) => {
    nudged.push(`start ${hash}`);
    return () => nudged.push(`stop ${hash}`);
  };
  const account = devAccount(5);
  const managed = { ...parts.chains, ethereum: { ...parts.chains.ethereum, managed: true } };
  const first = await journaledAndSent(account, { to: devAccount(9).address, data: '0x' });
  assert.equal((await waiterWith({ chains: managed, nudge }).finish('ethereum', first.id, [first.txHash])).status, 'confirmed');
  assert.deepEqual(nudged, [`start ${first.txHash}`, `stop ${first.txHash}`]);
  const second = await journaledAndSent(account, { to: devAccount(9).address, data: '0x' });
  assert.equal((await waiterWith({ nudge }).finish('ethereum', second.id, [second.txHash])).status, 'confirmed');
  assert.equal(nudged.length, 2, 'not nudged on a node we do not run');
});
