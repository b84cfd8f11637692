import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createPublicClient, createTestClient, createWalletClient, http, parseEther, type Hex, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey, mnemonicToAccount } from 'viem/accounts';
import { loadConfig } from '../src/config/config.ts';
import { loadRelayerLanes } from '../src/chain/platform-account.ts';
import { startAnvil, type AnvilProcess } from '../src/chain/anvil-process.ts';
import { createReceiptWatcher, ReceiptNotFinalError } from '../src/chain/receipt-watcher.ts';
import { waitFor } from './support/wait-for.ts';
import { newUser, openSession, startPay, startPaymentTest, transferFor, type PaymentTest } from './support/payments.ts';

const sender = mnemonicToAccount('test test test test test test test test test test test junk');

/** A client whose head reads are counted: a watcher polls the head once per round, so two more reads mean a whole round saw the head. */
function countingHeads(url: string) {
  const client = createPublicClient({ chain: foundry, transport: http(url) }) as PublicClient;
  const counter = { heads: 0 };
  const getBlockNumber = client.getBlockNumber.bind(client);
  client.getBlockNumber = (async (args?: Parameters<PublicClient['getBlockNumber']>[0]) => {
    counter.heads++;
    return getBlockNumber(args);
  }) as PublicClient['getBlockNumber'];
  return { client, counter };
}

/** Until the watcher has finished at least one whole poll round after this call. */
async function untilPolledTwice(counter: { heads: number }): Promise<void> {
  const from = counter.heads;
  await waitFor(() => counter.heads >= from + 2, { timeoutMs: 10_000, message: 'the watcher polls the head again' });
}

function settledFlag<T>(promise: Promise<T>) {
  const state: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then((value) => { state.settled = true; state.value = value; }, (error: unknown) => { state.settled = true; state.error = error; });
  return state;
}

describe('receipt watcher with confirmations (anvil)', () => {
  let anvil: AnvilProcess;
  before(async () => { anvil = await startAnvil({ chainId: foundry.id, port: 0 }); });
  after(async () => { await anvil?.stop(); });

  const controls = () => createTestClient({ mode: 'anvil', chain: foundry, transport: http(anvil.url) });
  const wallet = () => createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });

  test('CONFIRMATIONS=3: the receipt resolves only once two blocks are on top of its block', async () => {
    const { client, counter } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20, { confirmations: 3 });
    const hash = await wallet().sendTransaction({ to: sender.address, value: 1n });
    const mined = await client.waitForTransactionReceipt({ hash });
    const wait = settledFlag(watcher.wait(hash, 20_000));

    await untilPolledTwice(counter);
    assert.equal(wait.settled, false, 'mined, no block on top: not final');
    await controls().mine({ blocks: 1 });
    await untilPolledTwice(counter);
    assert.equal(wait.settled, false, 'one block on top: not final');
    await controls().mine({ blocks: 1 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'final with two blocks on top' });
    assert.equal(wait.error, undefined);
    assert.equal(wait.value?.transactionHash, hash);
    assert.equal(wait.value?.blockHash, mined.blockHash);
    assert.ok((await client.getBlockNumber()) >= mined.blockNumber + 2n);
    watcher.close();
  });

  test('a receipt whose block is reverted away before its depth rejects `dropped`, never success', async () => {
    const { client, counter } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20, { confirmations: 3 });
    const snapshot = await controls().snapshot();
    const hash = await wallet().sendTransaction({ to: sender.address, value: 2n });
    await client.waitForTransactionReceipt({ hash });
    const wait = settledFlag(watcher.wait(hash, 20_000));
    await untilPolledTwice(counter);
    assert.equal(wait.settled, false);

    await controls().revert({ id: snapshot });
    await controls().mine({ blocks: 3 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends once the block is gone' });
    assert.ok(wait.error instanceof ReceiptNotFinalError, String(wait.error));
    assert.equal(wait.error.reason, 'dropped');
    assert.equal(wait.error.hash, hash);
    watcher.close();
  });

  test('anvil_reorg replacing the receipt\'s block rejects the wait, never success', async () => {
    const { client, counter } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20, { confirmations: 2 });
    const hash = await wallet().sendTransaction({ to: sender.address, value: 3n });
    const mined = await client.waitForTransactionReceipt({ hash });
    const wait = settledFlag(watcher.wait(hash, 20_000));
    await untilPolledTwice(counter);
    assert.equal(wait.settled, false);

    await client.request({ method: 'anvil_reorg', params: [1, []] } as never);
    await controls().mine({ blocks: 2 });
    await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends once the block is replaced' });
    assert.ok(wait.error instanceof ReceiptNotFinalError, String(wait.error));
    assert.ok(['dropped', 'reorged'].includes(wait.error.reason), wait.error.reason);
    const now = await client.getBlock({ blockNumber: mined.blockNumber }).catch(() => undefined);
    assert.notEqual(now?.hash, mined.blockHash, 'the block that held it is no longer canonical');
    watcher.close();
  });

  test('a transaction replaced in the pool by another of the same nonce rejects `replaced` once that one is mined', async () => {
    const { client, counter } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20);
    await controls().setAutomine(false);
    try {
      const nonce = await client.getTransactionCount({ address: sender.address, blockTag: 'pending' });
      const fees = await client.estimateFeesPerGas();
      const first = await wallet().sendTransaction({ to: sender.address, value: 6n, nonce, ...fees });
      const wait = settledFlag(watcher.wait(first, 20_000));
      await untilPolledTwice(counter);
      assert.equal(wait.settled, false, 'pending, not mined');
      const second = await wallet().sendTransaction({
        to: sender.address, value: 7n, nonce, maxFeePerGas: fees.maxFeePerGas * 3n, maxPriorityFeePerGas: fees.maxPriorityFeePerGas * 3n + 1n,
      });
      await controls().mine({ blocks: 1 });
      await waitFor(() => wait.settled, { timeoutMs: 10_000, message: 'the wait ends once the nonce is used' });
      assert.ok(wait.error instanceof ReceiptNotFinalError, String(wait.error));
      assert.equal(wait.error.reason, 'replaced');
      assert.equal((await client.getTransactionReceipt({ hash: second })).status, 'success');
    } finally {
      await controls().setAutomine(true);
      watcher.close();
    }
  });

  test('default (1 confirmation) resolves as soon as it is mined, as before', async () => {
    const { client } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20);
    const hash = await wallet().sendTransaction({ to: sender.address, value: 4n });
    assert.equal((await watcher.wait(hash, 10_000)).transactionHash, hash);
    watcher.close();
  });

  test('closing the watcher rejects a pending wait `closed`', async () => {
    const { client } = countingHeads(anvil.url);
    const watcher = createReceiptWatcher(client, 20, { confirmations: 5 });
    const hash = await wallet().sendTransaction({ to: sender.address, value: 5n });
    const waiting = watcher.wait(hash, 20_000);
    watcher.close();
    await assert.rejects(waiting, (error: unknown) => error instanceof ReceiptNotFinalError && error.reason === 'closed');
  });
});

describe('a payment with CONFIRMATIONS=3', () => {
  // The payment network on a node of its own (by RPC URL) that the test mines: interval mining while
  // the platform deploys its contracts and mints, then blocks only when the test mines them.
  let node: AnvilProcess;
  let p: PaymentTest;
  before(async () => {
    node = await startAnvil({ chainId: foundry.id, port: 0 });
    const controls = createTestClient({ mode: 'anvil', chain: foundry, transport: http(node.url) });
    await controls.setIntervalMining({ interval: 1 });
    const relayerKey = generatePrivateKey();
    for (const lane of loadRelayerLanes({ privateKey: relayerKey, dataDir: node.url, vault: undefined as never, count: loadConfig({}).relayerLanes })) {
      await controls.setBalance({ address: lane.address, value: parseEther('1000') });
    }
    p = await startPaymentTest({
      RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, PAYMENT_NETWORK: 'ethereum',
      CONFIRMATIONS_ETHEREUM: '3', PAYMENT_IDLE_TIMEOUT_SECONDS: '60',
    });
  });
  after(async () => {
    await p?.stop();
    await node?.stop();
  });

  test('reaches END_PAY only after its transfer has two blocks on top', async () => {
    const { platform } = p.t;
    const chain = platform.chains.ethereum;
    assert.equal(chain.managed, false);
    const controls = createTestClient({ mode: 'anvil', chain: foundry, transport: http(node.url) });
    const counter = { heads: 0 };
    const getBlockNumber = chain.client.getBlockNumber.bind(chain.client);
    chain.client.getBlockNumber = (async (args?: Parameters<PublicClient['getBlockNumber']>[0]) => {
      counter.heads++;
      return getBlockNumber(args);
    }) as PublicClient['getBlockNumber'];

    const store = await platform.payments.addStore({ tid: 'T-CONF', name: 'Deep Cafe' });
    await platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
    const user = await newUser(p, '10');
    // From here on, a block per transaction and the ones the test mines.
    await controls.setIntervalMining({ interval: 0 });
    await controls.setAutomine(true);

    const uuid = randomUUID();
    const tran = `TR${uuid.slice(0, 8)}`;
    const app = openSession(p.client, 'DoPayment', user.token);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    const posSeen: any[] = [];
    pos.call.on('data', (m: any) => posSeen.push(m));
    app.send({ state: 'START_PAY', user_uuid: uuid });
    pos.send(startPay(p, store.tid, tran, user, uuid, '5000'));
    const appRequest = await app.next();
    const head0 = await chain.client.getBlockNumber();
    app.send(await transferFor(p, user, appRequest));

    const minedAt = await waitFor(async () => {
      const head = await chain.client.getBlockNumber();
      return head > head0 ? head : undefined;
    }, { timeoutMs: 20_000, message: 'the transfer is mined' });
    await untilPolledTwice(counter);
    assert.equal(posSeen.some((m) => m.content?.state === 'END_PAY'), false, 'mined, no block on top: no END_PAY');
    await controls.mine({ blocks: 1 });
    await untilPolledTwice(counter);
    assert.equal(posSeen.some((m) => m.content?.state === 'END_PAY'), false, 'one block on top: no END_PAY');
    await controls.mine({ blocks: 1 });

    const end = await waitFor(() => posSeen.find((m) => m.content?.state === 'END_PAY'), { timeoutMs: 20_000, message: 'END_PAY after the second block' });
    assert.equal(end.common.res_code, '00');
    const receipt = await chain.client.getTransactionReceipt({ hash: end.content.transfer_transaction_id as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.blockNumber, minedAt);
    assert.ok((await chain.client.getBlockNumber()) >= minedAt + 2n);
    await app.closed;
    await pos.closed;
  });
});
