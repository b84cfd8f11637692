import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createWalletClient, http, parseEther, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createReceiptWatcher } from './receipt-watcher.ts';
import { countingClient } from '../../test/support/counting-client.ts';
import type { BlockSchedule } from './block-schedule.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// On a real anvil: every waiter gets its own receipt, one poll serves them all.
let anvil: AnvilProcess;
before(async () => { anvil = await startAnvil({ chainId: foundry.id, port: 0 }); });
after(async () => { await anvil?.stop(); });

const sender = mnemonicToAccount('test test test test test test test test test test test junk');


test('60 waits at once each resolve with their own receipt, polling the head once per interval for all of them', async () => {
  const { client, calls } = countingClient(anvil.url);
  const watcher = createReceiptWatcher(client, 20);
  const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
  const testClient = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  await testClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  const hashes: Hex[] = [];
  for (let i = 0; i < 60; i++) hashes.push(await wallet.sendTransaction({ to: sender.address, value: parseEther('0.001'), nonce: await testClient.getTransactionCount({ address: sender.address, blockTag: 'pending' }) }));
  const waits = hashes.map((hash) => watcher.wait(hash, 20_000));
  await testClient.request({ method: 'evm_mine' as never, params: [] as never });
  await testClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
  const receipts = await Promise.all(waits);
  receipts.forEach((receipt, i) => {
    assert.equal(receipt.transactionHash, hashes[i]);
    assert.equal(receipt.status, 'success');
  });
  assert.equal(new Set(receipts.map((r) => r.blockNumber)).size, 1, 'all mined in the one block');
  assert.ok((calls.get('eth_getBlockReceipts') ?? 0) <= 2, `block receipts fetched per block, not per waiter: ${JSON.stringify([...calls])}`);
  assert.ok((calls.get('eth_blockNumber') ?? 0) < 60, `the head is polled for all waiters together: ${JSON.stringify([...calls])}`);
});

test('a transaction mined before its wait is found; an unknown one times out', async () => {
  const { client, calls } = countingClient(anvil.url);
  const watcher = createReceiptWatcher(client, 20);
  const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
  const hash = await wallet.sendTransaction({ to: sender.address, value: 1n });
  await createPublicClient({ chain: foundry, transport: http(anvil.url) }).waitForTransactionReceipt({ hash });
  assert.equal((await watcher.wait(hash, 5_000)).transactionHash, hash);
  assert.equal(calls.get('eth_getTransactionByHash') ?? 0, 0, 'found at its first look: its sender is not asked');
  await assert.rejects(watcher.wait(`0x${'ab'.repeat(32)}`, 200), /no receipt/);
  // The wait that ran out was the only one: nothing is waited for, the head is no longer read.
  const polled = calls.get('eth_blockNumber') ?? 0;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(calls.get('eth_blockNumber') ?? 0, polled, 'no head read after the last wait ran out');
  watcher.close();
});

test('with the node\'s new heads pushed over WebSocket, a receipt is found as its block is mined, not at the next poll', async () => {
  const { client, calls } = countingClient(anvil.url);
  let announce: ((number: bigint) => void) | undefined;
  // A 60 s poll: only the pushed head can make the wait end within the test.
  const watcher = createReceiptWatcher(client, 60_000, { heads: (onHead) => { announce = onHead; return () => { announce = undefined; }; } });
  const testClient = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
  await testClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  try {
    const hash = await wallet.sendTransaction({ to: sender.address, value: 1n, nonce: await testClient.getTransactionCount({ address: sender.address, blockTag: 'pending' }) });
    const waited = watcher.wait(hash, 30_000);
    // The first look (at once) finds it pending; the next poll is a minute away.
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = calls.get('eth_blockNumber') ?? 0;
    assert.equal(before, 1, 'one look at its start');
    await testClient.request({ method: 'evm_mine' as never, params: [] as never });
    const started = performance.now();
    announce?.(await testClient.getBlockNumber({ cacheTime: 0 }));
    assert.equal((await waited).transactionHash, hash);
    assert.ok(performance.now() - started < 5_000, 'found right after the head was announced');
    assert.ok((calls.get('eth_blockNumber') ?? 0) > before, 'the announced head started a poll');
  } finally {
    await testClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    watcher.close();
  }
  assert.equal(announce, undefined, 'closing the watcher unsubscribes from new heads');
});

/** What the watcher reads of a chain's schedule: its next block due at `dueAt` (local ms), `intervalMs` apart; the heads it is told of. */
function knownSchedule(dueAt: number, intervalMs: number) {
  const observed: bigint[] = [];
  const schedule = { observe: (number: bigint) => { observed.push(number); }, nextBlockAt: () => dueAt, intervalMs: () => intervalMs } as Partial<BlockSchedule> as BlockSchedule;
  return { schedule, observed };
}

test('12 s blocks, the next one 10 s off: the head is not asked for again until shortly before it, and a wait begun meanwhile is looked up at once', async () => {
  const { client, calls } = countingClient(anvil.url);
  const { schedule, observed } = knownSchedule(Date.now() + 10_000, 12_000);
  const watcher = createReceiptWatcher(client, 50, { schedule });
  const pending = watcher.wait(`0x${'cd'.repeat(32)}`, 30_000).catch((error: unknown) => error);
  try {
    await waitFor(() => observed.length > 0, { timeoutMs: 10_000, message: 'the first look' });
    const head = await createPublicClient({ chain: foundry, transport: http(anvil.url) }).getBlockNumber({ cacheTime: 0 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(calls.get('eth_blockNumber') ?? 0, 1, 'one look, the next one shortly before the block is due');
    assert.deepEqual(observed, [head], 'the schedule is told of the head read');
    const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
    const hash = await wallet.sendTransaction({ to: sender.address, value: 2n });
    await createPublicClient({ chain: foundry, transport: http(anvil.url) }).waitForTransactionReceipt({ hash });
    assert.equal((await watcher.wait(hash, 4_000)).transactionHash, hash, 'looked up at once, not at the look before the block');
  } finally {
    watcher.close();
  }
  assert.match(String(await pending), /closed/);
});

test('a block due in 5 s on a chain of minute-long blocks: the watcher asks every poll from 6 s before it, and a receipt is found as its block is mined', async () => {
  const { client, calls } = countingClient(anvil.url);
  const { schedule } = knownSchedule(Date.now() + 5_000, 60_000);
  const watcher = createReceiptWatcher(client, 50, { schedule });
  const testClient = createPublicClient({ chain: foundry, transport: http(anvil.url) });
  const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
  await testClient.request({ method: 'evm_setAutomine' as never, params: [false] as never });
  try {
    const hash = await wallet.sendTransaction({ to: sender.address, value: 3n, nonce: await testClient.getTransactionCount({ address: sender.address, blockTag: 'pending' }) });
    const waited = watcher.wait(hash, 4_000);
    await waitFor(() => (calls.get('eth_getTransactionByHash') ?? 0) > 0, { timeoutMs: 3_000, message: 'the first look finds it pending' });
    await testClient.request({ method: 'evm_mine' as never, params: [] as never });
    assert.equal((await waited).transactionHash, hash);
  } finally {
    await testClient.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    watcher.close();
  }
});
