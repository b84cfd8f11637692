import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPublicClient, createTestClient, createWalletClient, http, keccak256, parseGwei } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from './anvil-process.ts';
import { createHeadSource, type HeadSource } from './head-source.ts';
import { createReceiptWatcher, ReceiptNotFinalError, type ReceiptWatcher } from './receipt-watcher.ts';
import { startTcpProxy, type TcpProxy } from '../../test/chaos/tcp-proxy.ts';
import { countingClient } from '../../test/support/counting-client.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// The receipt watcher fed by a real `newHeads` subscription (head-source.ts, viem's webSocket
// transport) to a real anvil that the test mines block by block (automine off), as chain-clients.ts
// wires them: which blocks it reads when a wait wakes it, after a burst of blocks, after a block
// replaced at the height it read, when the subscription drops; what the relayer is told.
let anvil: AnvilProcess;
let link: TcpProxy;
before(async () => {
  anvil = await startAnvil({ chainId: foundry.id, port: 0 });
  await controls().setAutomine(false);
  const { hostname, port } = new URL(anvil.url);
  link = await startTcpProxy({ host: hostname, port: Number(port) });
});
after(async () => {
  await link?.close();
  await anvil?.stop();
});

const sender = mnemonicToAccount('test test test test test test test test test test test junk');
const controls = () => createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.url) });
const wallet = () => createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
const reader = () => createPublicClient({ chain: foundry, transport: http(anvil.url) });
const nextNonce = () => reader().getTransactionCount({ address: sender.address, blockTag: 'pending' });
/** A transfer sent to the node's pool (mined with the next block). */
const sent = async (value: bigint) => wallet().sendTransaction({ to: sender.address, value, nonce: await nextNonce() });
/** A transfer signed, not sent: unknown to the node until the test sends it. */
const signed = async (value: bigint) => {
  const raw = await wallet().signTransaction(await wallet().prepareTransactionRequest({ to: sender.address, value, nonce: await nextNonce() }));
  return { raw, hash: keccak256(raw) };
};

function settledFlag<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then((value) => { state.settled = true; state.value = value; }, (error: unknown) => { state.settled = true; state.error = error; });
  return state;
}

interface Pushed extends ReturnType<typeof countingClient> {
  source: HeadSource;
  watcher: ReceiptWatcher;
  /** Mines `blocks` and returns the new head once the subscription pushed it. */
  mined(blocks: number): Promise<bigint>;
  /** Until no call of the watcher is in flight. */
  idle(): Promise<void>;
  close(): void;
}

/** A watcher on a `newHeads` subscription that is up (its poll a minute, unless given: only pushed heads or a drop make it look). */
async function pushedWatcher(options: { url?: string; pollMs?: number; confirmations?: number; firstHead?: boolean } = {}): Promise<Pushed> {
  const counting = countingClient(anvil.url);
  const source = createHeadSource({ url: options.url ?? anvil.url.replace(/^http/, 'ws'), minBackoffMs: 50 });
  const watcher = createReceiptWatcher(counting.client, options.pollMs ?? 60_000, { source, confirmations: options.confirmations ?? 1 });
  await waitFor(() => source.up(), { timeoutMs: 10_000, message: 'the subscription is made' });
  const mined = async (blocks: number) => {
    const target = (await reader().getBlockNumber({ cacheTime: 0 })) + BigInt(blocks);
    await controls().mine({ blocks });
    await waitFor(() => source.latest()?.number === target, { timeoutMs: 10_000, message: `head ${target} pushed` });
    return target;
  };
  const idle = async () => {
    await waitFor(async () => {
      if (counting.state.inFlight > 0) return false;
      await new Promise((resolve) => setTimeout(resolve, 30));
      return counting.state.inFlight === 0;
    }, { timeoutMs: 10_000, message: 'the watcher\'s calls end' });
  };
  const pushed: Pushed = { ...counting, source, watcher, mined, idle, close() { watcher.close(); source.close(); } };
  if (options.firstHead !== false) await mined(1);
  return pushed;
}

/** Each block read once: a list of block numbers without repeats. */
function assertReadOnce(blocks: bigint[]): void {
  const repeated = blocks.filter((block, i) => blocks.indexOf(block) !== i);
  assert.deepEqual(repeated, [], `blocks read twice: ${repeated.join(', ')}`);
}

test('woken by waits: a transaction mined before the head is found in the blocks read back, and the block after it is not read; one mined in the head\'s block is found there, one still pending in its block once pushed; no head asked, no receipt by transaction', async () => {
  const w = await pushedWatcher();
  try {
    const x = await sent(1n);
    const xBlock = await w.mined(1);
    const y = await sent(2n);
    const head = await w.mined(1);
    const rx = await w.watcher.wait(x, 10_000);
    assert.equal(rx.transactionHash, x);
    assert.equal(rx.blockNumber, xBlock);
    await w.idle();
    assert.ok(!w.blocksRead.includes(head), 'nothing else waited for: the head\'s block is not read');
    // The block left unread is read once a wait begins that it may hold.
    const ry = await w.watcher.wait(y, 10_000);
    assert.equal(ry.blockNumber, head);
    const z = await sent(3n);
    const waitZ = w.watcher.wait(z, 10_000);
    await w.idle();
    const zBlock = await w.mined(1);
    const rz = await waitZ;
    assert.equal(rz.transactionHash, z);
    assert.equal(rz.blockNumber, zBlock);
    assertReadOnce(w.blocksRead);
    assert.equal(w.count('eth_blockNumber'), 0, 'no head asked');
    assert.equal(w.count('eth_getTransactionReceipt'), 0, 'every receipt read with its block');
  } finally {
    w.close();
  }
});

test('a transaction in a block read for another wait is found at once when its own wait begins, with no block after', async () => {
  const w = await pushedWatcher();
  try {
    const a = await sent(4n);
    const b = await sent(5n);
    const waitA = w.watcher.wait(a, 10_000);
    await w.idle();
    const block = await w.mined(1);
    assert.equal((await waitA).blockNumber, block);
    await w.mined(1);
    await w.idle();
    const rb = await w.watcher.wait(b, 5_000);
    assert.equal(rb.transactionHash, b);
    assert.equal(rb.blockNumber, block);
    assertReadOnce(w.blocksRead);
    assert.equal(w.count('eth_getTransactionReceipt'), 0, 'read with its block, not by itself');
  } finally {
    w.close();
  }
});

test('a watcher woken 40 blocks after its last wait reads the latest 32 of them, not all it slept through, then the block that carries its transaction', async () => {
  const w = await pushedWatcher();
  try {
    const a = await sent(6n);
    const aBlock = await w.mined(1);
    assert.equal((await w.watcher.wait(a, 10_000)).blockNumber, aBlock);
    await w.idle();
    const head = await w.mined(40);
    const b = await sent(7n);
    const waitB = w.watcher.wait(b, 10_000);
    await waitFor(() => w.blocksRead.includes(head), { timeoutMs: 10_000, message: 'the head\'s block is read' });
    await w.idle();
    const slept = w.blocksRead.filter((n) => n > aBlock && n <= head - 32n);
    assert.deepEqual(slept, [], 'none of the blocks more than 32 below the head');
    assert.ok(w.blocksRead.includes(head - 31n), 'the 32 latest blocks are read');
    const bBlock = await w.mined(1);
    assert.equal((await waitB).blockNumber, bBlock);
    assertReadOnce(w.blocksRead);
  } finally {
    w.close();
  }
});

test('a transaction mined long before its wait began and waited for as sent earlier (recovery: mined while this process was down) is found by its own receipt at once, with no block after', async () => {
  const w = await pushedWatcher();
  try {
    const a = await sent(8n);
    const aBlock = await w.mined(1);
    assert.equal((await w.watcher.wait(a, 10_000)).blockNumber, aBlock);
    // Mined where no scan of this watcher reaches: 41 blocks below a head it read for another wait.
    const old = await sent(9n);
    const oldBlock = await w.mined(1);
    await w.mined(40);
    const b = await sent(10n);
    const waitB = w.watcher.wait(b, 10_000);
    await w.idle();
    const bBlock = await w.mined(1);
    assert.equal((await waitB).blockNumber, bBlock);
    await w.idle();
    const before = w.count('eth_getTransactionReceipt');
    const found = await w.watcher.wait(old, 5_000, { sentBefore: true });
    assert.equal(found.transactionHash, old);
    assert.equal(found.blockNumber, oldBlock);
    assert.equal(w.count('eth_getTransactionReceipt') - before, 1, 'one look-up by its own receipt');
  } finally {
    w.close();
  }
});

test('waited for as sent earlier: one mined in a block already pushed is found by one look-up; one never mined is looked up by its receipt once, not at every head after', async () => {
  const w = await pushedWatcher();
  try {
    const a = await sent(11n);
    const other = await signed(12n); // waited for, never sent: the watcher keeps reading blocks for it
    const waitOther = w.watcher.wait(other.hash, 30_000).catch((error: unknown) => error);
    const aBlock = await w.mined(1);
    await w.idle();
    const before = w.count('eth_getTransactionReceipt');
    const found = await w.watcher.wait(a, 5_000, { sentBefore: true });
    assert.equal(found.blockNumber, aBlock);
    await w.idle();
    assert.equal(w.count('eth_getTransactionReceipt') - before, 1, 'looked up by its receipt once');
    const never = await signed(13n);
    const waitNever = w.watcher.wait(never.hash, 30_000, { sentBefore: true }).catch((error: unknown) => error);
    await w.idle();
    await w.mined(3);
    await w.idle();
    assert.equal(w.count('eth_getTransactionReceipt') - before, 2, 'the one never mined looked up once, then looked for in the blocks');
    w.close();
    await Promise.all([waitOther, waitNever]);
  } finally {
    w.close();
  }
});

test('polled (no subscription): a wait as sent earlier is looked up once at its first poll, with its own fresh look-up, not twice', async () => {
  const counting = countingClient(anvil.url);
  const watcher = createReceiptWatcher(counting.client, 100, {});
  try {
    const old = await sent(14n);
    await controls().mine({ blocks: 1 });
    const minedAt = (await reader().getTransactionReceipt({ hash: old })).blockNumber;
    await controls().mine({ blocks: 5 });
    const found = await watcher.wait(old, 5_000, { sentBefore: true });
    assert.equal(found.blockNumber, minedAt);
    assert.equal(counting.count('eth_getTransactionReceipt'), 1);
  } finally {
    watcher.close();
  }
});

test('heads pushed while a read is slow to answer: the blocks they bring are all read once the read ends, none twice, and a wait begun meanwhile is found in them', async () => {
  const w = await pushedWatcher();
  try {
    const other = await signed(8n); // waited for, never sent: the watcher keeps reading blocks for it
    const release = w.hold('eth_getBlockReceipts');
    const waitOther = w.watcher.wait(other.hash, 30_000).catch((error: unknown) => error);
    await waitFor(() => w.count('eth_getBlockReceipts') > 0, { timeoutMs: 10_000, message: 'the wake\'s first block read is sent' });
    const first = w.blocksRead[0] as bigint;
    const b = await sent(9n);
    const head = await w.mined(40);
    const bBlock = head - 39n;
    const waitB = w.watcher.wait(b, 10_000);
    release();
    const rb = await waitB;
    assert.equal(rb.transactionHash, b);
    assert.equal(rb.blockNumber, bBlock);
    await waitFor(() => w.blocksRead.includes(head), { timeoutMs: 10_000, message: 'the head\'s block is read' });
    await w.idle();
    assertReadOnce(w.blocksRead);
    const missed: bigint[] = [];
    for (let n = first; n <= head; n++) if (!w.blocksRead.includes(n)) missed.push(n);
    assert.deepEqual(missed, [], 'every block from the wake to the head is read');
    w.close();
    assert.equal(reasonOf(await waitOther), 'closed');
  } finally {
    w.close();
  }
});

test('a subscription just made, its first head pushed while the watcher asked the node for the head: a wait begun meanwhile is found in that head\'s block, which no poll had read', async () => {
  const w = await pushedWatcher({ firstHead: false });
  try {
    const other = await signed(10n);
    const releaseHead = w.hold('eth_blockNumber');
    const waitOther = w.watcher.wait(other.hash, 30_000).catch((error: unknown) => error);
    await waitFor(() => w.count('eth_blockNumber') > 0, { timeoutMs: 10_000, message: 'no head pushed yet: the watcher asks for it' });
    const b = await sent(11n);
    const block = await w.mined(1);
    const releaseLookUp = w.hold('eth_getTransactionReceipt');
    releaseHead();
    await waitFor(() => w.count('eth_getTransactionReceipt') > 0, { timeoutMs: 10_000, message: 'the other transaction is looked up' });
    const waitB = w.watcher.wait(b, 8_000);
    releaseLookUp();
    const rb = await waitB;
    assert.equal(rb.transactionHash, b);
    assert.equal(rb.blockNumber, block);
    w.close();
    assert.equal(reasonOf(await waitOther), 'closed');
  } finally {
    w.close();
  }
});

test('a block replaced at the height already read (a reorg of one block): the new block is read and the transaction in it found', async () => {
  const w = await pushedWatcher();
  try {
    const tx = await signed(12n);
    const snapshot = await controls().snapshot();
    const wait = settledFlag(w.watcher.wait(tx.hash, 8_000));
    await w.idle();
    const height = await w.mined(1);
    await waitFor(() => w.blocksRead.includes(height), { timeoutMs: 10_000, message: 'the block is read' });
    await w.idle();
    await controls().revert({ id: snapshot });
    await reader().sendRawTransaction({ serializedTransaction: tx.raw });
    assert.equal(await w.mined(1), height, 'the new block at the same height');
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.transactionHash, tx.hash);
    assert.equal(wait.value?.blockNumber, height);
  } finally {
    w.close();
  }
});

test('pushed heads: a pending transaction whose nonce another transaction used is told `replaced`', async () => {
  const w = await pushedWatcher();
  try {
    const nonce = await nextNonce();
    const cheap = await wallet().sendTransaction({ to: sender.address, value: 13n, nonce, maxFeePerGas: parseGwei('2'), maxPriorityFeePerGas: parseGwei('1') });
    const wait = settledFlag(w.watcher.wait(cheap, 20_000));
    await w.idle();
    const second = await wallet().sendTransaction({ to: sender.address, value: 14n, nonce, maxFeePerGas: parseGwei('200'), maxPriorityFeePerGas: parseGwei('3') });
    await w.mined(1);
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends once the nonce is used' });
    assert.equal(reasonOf(wait.error), 'replaced');
    assert.equal((await reader().getTransactionReceipt({ hash: second })).status, 'success');
  } finally {
    w.close();
  }
});

test('a block read the node did not answer is made again at the poll interval: the receipt comes with no other head pushed', async () => {
  const w = await pushedWatcher({ pollMs: 100 });
  try {
    const tx = await sent(16n);
    const wait = settledFlag(w.watcher.wait(tx, 10_000));
    await w.idle();
    w.failOnce('eth_getBlockReceipts');
    const block = await w.mined(1);
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.blockNumber, block);
    assert.equal(w.blocksRead.filter((n) => n === block).length, 2, 'its block read again after the read that was not answered');
    assert.equal(w.count('eth_blockNumber'), 0, 'no head asked');
  } finally {
    w.close();
  }
});

test('the subscription dropped: the watcher polls the node at once and finds the receipt of a block no head was pushed for', async () => {
  link.set({ kind: 'pass' });
  const w = await pushedWatcher({ url: `ws://127.0.0.1:${link.port}`, pollMs: 100 });
  try {
    const tx = await sent(15n);
    const wait = settledFlag(w.watcher.wait(tx, 10_000));
    await w.idle();
    assert.equal(w.count('eth_blockNumber'), 0, 'no head asked while the subscription is up');
    link.set({ kind: 'cut' });
    await waitFor(() => !w.source.up(), { timeoutMs: 10_000, message: 'the subscription is seen down' });
    await controls().mine({ blocks: 1 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.transactionHash, tx);
    assert.ok(w.count('eth_blockNumber') > 0, 'the head polled');
  } finally {
    w.close();
    link.set({ kind: 'pass' });
  }
});

function reasonOf(error: unknown): string {
  assert.ok(error instanceof ReceiptNotFinalError, String(error));
  return error.reason;
}
