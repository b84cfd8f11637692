import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, createWalletClient, custom, http, keccak256, parseGwei, type Hex, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createReceiptWatcher, ReceiptNotFinalError } from './receipt-watcher.ts';
import type { HeadSource, PushedHead } from './head-source.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// The receipt watcher's block scan, confirmations and replacement checks on a real anvil that the
// test mines block by block (automine off): what a relayer is told of a transaction it sent.
let anvil: AnvilProcess;
before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  await controls().setAutomine(false);
});
after(async () => { await anvil?.stop(); });

const sender = mnemonicToAccount('test test test test test test test test test test test junk');
const controls = () => createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.url) });
const wallet = () => createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
const reader = () => createPublicClient({ chain: foundry, transport: http(anvil.url) });

/** A client whose calls are counted by method: one eth_blockNumber per poll round. */
function countingClient() {
  const calls = new Map<string, number>();
  const inner = http(anvil.url)({ chain: foundry });
  const state = { inFlight: 0 };
  const client = createPublicClient({
    chain: foundry,
    transport: custom({
      request: async (args: { method: string; params?: unknown }) => {
        calls.set(args.method, (calls.get(args.method) ?? 0) + 1);
        state.inFlight++;
        try {
          return await inner.request(args as never);
        } finally {
          state.inFlight--;
        }
      },
    }),
  }) as PublicClient;
  return { client, calls, state, count: (method: string) => calls.get(method) ?? 0 };
}

/**
 * A watcher that polls only when the test announces a head (its interval is a minute): the test
 * decides which heads it sees. `polled()` announces the node's head and returns once that poll ended.
 */
function announcedWatcher(confirmations: number) {
  const { client, count, state } = countingClient();
  const listener: { announce?: (head: bigint) => void } = {};
  const watcher = createReceiptWatcher(client, 60_000, {
    confirmations,
    heads: (onHead) => { listener.announce = onHead; return () => { listener.announce = undefined; }; },
  });
  const idle = async () => {
    await waitFor(async () => {
      if (state.inFlight > 0) return false;
      await new Promise((resolve) => setTimeout(resolve, 30));
      return state.inFlight === 0;
    }, { timeoutMs: 10_000, message: 'the poll ends' });
  };
  const polled = async () => {
    const from = count('eth_blockNumber');
    listener.announce?.(await reader().getBlockNumber({ cacheTime: 0 }));
    await waitFor(() => count('eth_blockNumber') > from, { timeoutMs: 10_000, message: 'the announced head starts a poll' });
    await idle();
  };
  return { watcher, count, listener, polled, idle };
}

/** Until the watcher has finished at least one whole poll round after this call. */
async function untilPolledTwice(count: (method: string) => number): Promise<void> {
  const from = count('eth_blockNumber');
  await waitFor(() => count('eth_blockNumber') >= from + 2, { timeoutMs: 10_000, message: 'the watcher polls the head again' });
}

function settledFlag<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then((value) => { state.settled = true; state.value = value; }, (error: unknown) => { state.settled = true; state.error = error; });
  return state;
}

function reasonOf(error: unknown): string {
  assert.ok(error instanceof ReceiptNotFinalError, String(error));
  return error.reason;
}

const nextNonce = () => reader().getTransactionCount({ address: sender.address, blockTag: 'pending' });

test('a pending transaction waits through blocks that do not use its nonce; once another transaction of its nonce is mined, the wait rejects `replaced`', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20);
  try {
    const nonce = await nextNonce();
    // Too cheap for the blocks mined next (base fee 50 gwei): it stays in the pool while they are mined.
    const cheap = await wallet().sendTransaction({ to: sender.address, value: 6n, nonce, maxFeePerGas: parseGwei('2'), maxPriorityFeePerGas: parseGwei('1') });
    const wait = settledFlag(watcher.wait(cheap, 30_000));
    await waitFor(() => count('eth_getTransactionByHash') > 0, { timeoutMs: 10_000, message: 'the watcher learns its sender and nonce' });
    await untilPolledTwice(count);
    assert.equal(count('eth_getTransactionCount'), 0, 'no block came: no nonce is read');
    assert.equal(count('eth_getBlockReceipts'), 0, 'no block came: none is scanned');

    await controls().setNextBlockBaseFeePerGas({ baseFeePerGas: parseGwei('50') });
    await controls().mine({ blocks: 1 });
    await waitFor(() => count('eth_getTransactionCount') > 0, { timeoutMs: 10_000, message: 'the new block makes the watcher read the sender\'s nonce' });
    await untilPolledTwice(count);
    assert.equal(wait.settled, false, 'its nonce is still the next one: not replaced');
    assert.equal(count('eth_getBlockReceipts'), 1, 'the one new block is scanned once');

    const second = await wallet().sendTransaction({ to: sender.address, value: 7n, nonce, maxFeePerGas: parseGwei('200'), maxPriorityFeePerGas: parseGwei('3') });
    await controls().mine({ blocks: 1 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends once the nonce is used' });
    assert.equal(reasonOf(wait.error), 'replaced');
    assert.match(String((wait.error as Error).message), new RegExp(`^${cheap} was not mined: nonce ${nonce} of ${sender.address.toLowerCase()} was used by another transaction$`));
    assert.equal((await reader().getTransactionReceipt({ hash: second })).status, 'success');
  } finally {
    watcher.close();
  }
});

test('a transaction mined in a block after its first look is found by the block scan, each of two waits of it gets the receipt, and a third wait that times out leaves them be', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20);
  try {
    const hash = await wallet().sendTransaction({ to: sender.address, value: 8n, nonce: await nextNonce() });
    const first = watcher.wait(hash, 30_000);
    const second = watcher.wait(hash, 30_000);
    await assert.rejects(watcher.wait(hash, 50), (error: unknown) => reasonOf(error) === 'timeout' && /^no receipt for 0x[0-9a-f]{64} within 50 ms$/.test((error as Error).message));
    await untilPolledTwice(count);
    await controls().mine({ blocks: 1 });
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.transactionHash, hash);
    assert.equal(b.transactionHash, hash);
    assert.equal(a.status, 'success');
    assert.ok(count('eth_getBlockReceipts') >= 1, 'found in the block\'s receipts');
  } finally {
    watcher.close();
  }
});

test('a watcher with nothing to wait for stops polling, and a second wait of a transaction not yet looked up is looked up at the next poll', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20);
  try {
    const hash = await wallet().sendTransaction({ to: sender.address, value: 9n, nonce: await nextNonce() });
    await controls().mine({ blocks: 1 });
    assert.equal((await watcher.wait(hash, 10_000)).transactionHash, hash);
    const idle = count('eth_blockNumber');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(count('eth_blockNumber'), idle, 'nothing waited for: the head is not read');
  } finally {
    watcher.close();
  }
});

test('a watcher that was idle while blocks were mined reads none of them for a new wait, only the block that carries it', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20);
  try {
    const first = await wallet().sendTransaction({ to: sender.address, value: 14n, nonce: await nextNonce() });
    await controls().mine({ blocks: 1 });
    assert.equal((await watcher.wait(first, 10_000)).transactionHash, first);
    await controls().mine({ blocks: 3 });
    const hash = await wallet().sendTransaction({ to: sender.address, value: 15n, nonce: await nextNonce() });
    const read = count('eth_getBlockReceipts');
    const wait = settledFlag(watcher.wait(hash, 30_000));
    await untilPolledTwice(count);
    assert.equal(wait.settled, false);
    assert.equal(count('eth_getBlockReceipts'), read, 'the blocks mined while nothing was waited for are not read');
    await controls().mine({ blocks: 1 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'found in its block' });
    assert.equal(wait.value?.transactionHash, hash);
    assert.equal(count('eth_getBlockReceipts'), read + 1, 'only the block that carries it is read');
  } finally {
    watcher.close();
  }
});

test('with 3 confirmations: held until two blocks are on its block; a wait that runs out says it waited for the confirmations', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20, { confirmations: 3 });
  try {
    const hash = await wallet().sendTransaction({ to: sender.address, value: 10n, nonce: await nextNonce() });
    await controls().mine({ blocks: 1 });
    const mined = await reader().getTransactionReceipt({ hash });
    const wait = settledFlag(watcher.wait(hash, 30_000));
    const short = watcher.wait(hash, 300);
    await untilPolledTwice(count);
    assert.equal(wait.settled, false, 'no block on top');
    await assert.rejects(short, (error: unknown) => reasonOf(error) === 'timeout' && /^no 3 confirmations for 0x[0-9a-f]{64} within 300 ms$/.test((error as Error).message));
    await controls().mine({ blocks: 1 });
    await untilPolledTwice(count);
    assert.equal(wait.settled, false, 'one block on top');
    await controls().mine({ blocks: 1 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'final with two blocks on top' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.blockHash, mined.blockHash);
    assert.equal(wait.value?.blockNumber, mined.blockNumber);
  } finally {
    watcher.close();
  }
});

test('with 3 confirmations: a held receipt mined again in a later block after a reorg counts its confirmations from there', async () => {
  const { watcher, polled, idle } = announcedWatcher(3);
  try {
    const snapshot = await controls().snapshot();
    const signed = await wallet().signTransaction(await wallet().prepareTransactionRequest({ to: sender.address, value: 11n, nonce: await nextNonce() }));
    const hash = await reader().sendRawTransaction({ serializedTransaction: signed });
    await controls().mine({ blocks: 1 });
    const first = await reader().getTransactionReceipt({ hash });
    const wait = settledFlag(watcher.wait(hash, 30_000));
    await idle();
    await polled();
    // The block leaves the chain; an empty block takes its height and the transaction comes back in the next one.
    await controls().revert({ id: snapshot });
    await controls().mine({ blocks: 1 });
    await reader().sendRawTransaction({ serializedTransaction: signed }).catch(() => undefined);
    await controls().mine({ blocks: 1 });
    const again = await reader().getTransactionReceipt({ hash });
    assert.equal(again.blockNumber, first.blockNumber + 1n);
    await polled();
    assert.equal(wait.settled, false, 'its new block is the head: not final');
    await controls().mine({ blocks: 1 });
    await polled();
    assert.equal(wait.settled, false, 'one block on its new block: not final');
    await controls().mine({ blocks: 1 });
    await polled();
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'final with two blocks on its new block' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.blockHash, again.blockHash);
    assert.equal(wait.value?.blockNumber, first.blockNumber + 1n);
  } finally {
    watcher.close();
  }
});

test('with 3 confirmations: a held receipt whose block left the chain rejects `reorged` while the node has it in its pool again, `dropped` once it has not', async () => {
  const { watcher, polled, idle } = announcedWatcher(3);
  try {
    const snapshot = await controls().snapshot();
    const signed = await wallet().signTransaction(await wallet().prepareTransactionRequest({ to: sender.address, value: 12n, nonce: await nextNonce() }));
    const hash = await reader().sendRawTransaction({ serializedTransaction: signed });
    await controls().mine({ blocks: 1 });
    const mined = await reader().getTransactionReceipt({ hash });
    const reorged = settledFlag(watcher.wait(hash, 30_000));
    await idle();
    await polled();
    assert.equal(reorged.settled, false);
    await controls().revert({ id: snapshot });
    await reader().sendRawTransaction({ serializedTransaction: signed }).catch(() => undefined);
    await reader().getTransaction({ hash }); // pending again
    await polled();
    await waitFor(() => reorged.settled, { timeoutMs: 10_000, message: 'the wait ends once its block is gone' });
    assert.equal(reasonOf(reorged.error), 'reorged');
    assert.equal((reorged.error as Error).message, `${hash} was mined in block ${mined.blockNumber} (${mined.blockHash}), which left the chain; it is pending again`);

    const again = await controls().snapshot();
    await controls().mine({ blocks: 1 });
    const remined = await reader().getTransactionReceipt({ hash });
    const dropped = settledFlag(watcher.wait(hash, 30_000));
    await idle();
    await polled();
    assert.equal(dropped.settled, false);
    await controls().revert({ id: again });
    await controls().dropTransaction({ hash });
    await controls().mine({ blocks: 3 });
    await polled();
    await waitFor(() => dropped.settled, { timeoutMs: 10_000, message: 'the wait ends once its block is gone' });
    assert.equal(reasonOf(dropped.error), 'dropped');
    assert.equal((dropped.error as Error).message, `${hash} was mined in block ${remined.blockNumber} (${remined.blockHash}), which left the chain, and the node no longer has it`);
  } finally {
    watcher.close();
  }
});

test('after the chain got shorter, the blocks mined from the new head on are scanned again', async () => {
  const { watcher, polled, idle, count, listener } = announcedWatcher(1);
  try {
    const snapshot = await controls().snapshot();
    await controls().mine({ blocks: 2 });
    // Signed, not sent: unknown to the node at its first look.
    const signed = await wallet().signTransaction(await wallet().prepareTransactionRequest({ to: sender.address, value: 13n, nonce: await nextNonce() }));
    const hash: Hex = keccak256(signed);
    const wait = settledFlag(watcher.wait(hash, 30_000));
    await waitFor(() => count('eth_getTransactionReceipt') > 0, { timeoutMs: 10_000, message: 'the first look' });
    await idle();
    await controls().revert({ id: snapshot });
    await polled(); // the head two blocks lower
    await reader().sendRawTransaction({ serializedTransaction: signed });
    await controls().mine({ blocks: 1 });
    await polled();
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'found in the block after the lower head' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.transactionHash, hash);
  } finally {
    watcher.close();
  }
  assert.equal(listener.announce, undefined, 'closing the watcher unsubscribes from new heads');
});

test('a head below the block scanned, not seen at its own height first: its block (which replaced the one scanned there) is scanned', async () => {
  const { watcher, polled, idle, count } = announcedWatcher(1);
  try {
    const snapshot = await controls().snapshot();
    await controls().mine({ blocks: 2 });
    const signed = await wallet().signTransaction(await wallet().prepareTransactionRequest({ to: sender.address, value: 17n, nonce: await nextNonce() }));
    const hash: Hex = keccak256(signed);
    const wait = settledFlag(watcher.wait(hash, 30_000));
    await waitFor(() => count('eth_getTransactionReceipt') > 0, { timeoutMs: 10_000, message: 'the first look' });
    await idle();
    await polled(); // scanned up to the head, two blocks above the snapshot
    // Two blocks lost, one mined in their place carrying the transaction: the head is one below the block scanned.
    await controls().revert({ id: snapshot });
    await reader().sendRawTransaction({ serializedTransaction: signed });
    await controls().mine({ blocks: 1 });
    await polled();
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'found in the new head\'s own block' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.transactionHash, hash);
  } finally {
    watcher.close();
  }
});

/** A subscription the test pushes heads through (the node's own blocks): what head-source.ts hands the watcher. */
function pushingSource() {
  const listeners = new Set<(head: PushedHead) => void>();
  let latest: PushedHead | undefined;
  const source: HeadSource = {
    up: () => true, latest: () => latest, byHash: () => undefined, subscriptions: () => 1, wentBack: () => 0,
    onHead: (listener) => { listeners.add(listener); return () => listeners.delete(listener); },
    onState: () => () => undefined, close: () => undefined,
  };
  const push = async () => {
    const block = await reader().getBlock({ blockTag: 'latest' });
    latest = { number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp, baseFeePerGas: block.baseFeePerGas, at: Date.now(), rpc: {} as never };
    for (const listener of listeners) listener(latest);
  };
  return { source, push };
}

test('pushed heads: a transaction in a block the scan left unread (what it waited for was found earlier) is found there when its wait begins; no head asked', async () => {
  const { client, count, state } = countingClient();
  const { source, push } = pushingSource();
  const watcher = createReceiptWatcher(client, 60_000, { source });
  const idle = () => waitFor(async () => {
    if (state.inFlight > 0) return false;
    await new Promise((resolve) => setTimeout(resolve, 30));
    return state.inFlight === 0;
  }, { timeoutMs: 10_000, message: 'the poll ends' });
  try {
    await push();
    const nonce = await nextNonce();
    const first = await wallet().sendTransaction({ to: sender.address, value: 1n, nonce });
    const waitFirst = watcher.wait(first, 30_000);
    await idle();
    await controls().mine({ blocks: 1 });
    // Sent and mined before its wait, with a block after it: pushed as one head, the latest.
    const second = await wallet().sendTransaction({ to: sender.address, value: 2n, nonce: nonce + 1 });
    await controls().mine({ blocks: 2 });
    await push();
    assert.equal((await waitFirst).transactionHash, first);
    await idle();
    assert.equal((await watcher.wait(second, 10_000)).transactionHash, second, 'found in its block, not at the end of its wait');
    assert.equal(count('eth_blockNumber'), 0, 'no head asked');
    assert.equal(count('eth_getTransactionReceipt'), 0, 'none looked up by itself');
  } finally {
    watcher.close();
  }
});

test('closing the watcher rejects every pending wait `closed`; a watcher polls nothing after', async () => {
  const { client, count } = countingClient();
  const watcher = createReceiptWatcher(client, 20, { confirmations: 2 });
  const waits = [watcher.wait(`0x${'01'.repeat(32)}`, 20_000), watcher.wait(`0x${'02'.repeat(32)}`, 20_000)];
  await untilPolledTwice(count);
  watcher.close();
  for (const [i, wait] of waits.entries()) {
    await assert.rejects(wait, (error: unknown) => reasonOf(error) === 'closed'
      && (error as Error).message === `receipt watcher closed while waiting for 0x${`0${i + 1}`.repeat(32)}`);
  }
  const after = count('eth_blockNumber');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(count('eth_blockNumber'), after);
});
