import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, keccak256, toHex, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
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

/** The log lines the waiter writes, as an operator reads them (pino's JSON, one object a line). */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (chunk: string) => { lines.push(JSON.parse(chunk) as Record<string, unknown>); return true; } } as unknown as NodeJS.WritableStream;
  return { lines, logger: createLogger('info', destination) };
}
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
  // anvil is no OP-stack chain: no L1 data fee, no operator fee (0, not missing).
  const cost = (receipt: TransactionReceipt | undefined) => receipt && [receipt.blockNumber, receipt.gasUsed, receipt.gasUsed * receipt.effectiveGasPrice, 0n, 0n, 0];
  assert.ok((deployed.receipt?.effectiveGasPrice ?? 0n) > 0n);
  assert.deepEqual(mined.map((c) => [c.blockNumber, c.gasUsed, c.feeWei, c.l1FeeWei, c.operatorFeeWei, c.transfers]), [cost(deployed.receipt), cost(reverted.receipt)]);
  // The journal's record of each: its status, hash, block, the block's time and its index in the block.
  const recorded = await parts.journal.listLost('ethereum', new Map([[account.address, 0]]));
  const expected = [];
  for (const [id, { receipt }, status] of [[deploy.id, deployed, 'confirmed'], [call.id, reverted, 'failed']] as const) {
    const block = await parts.chains.ethereum.client.getBlock({ blockNumber: receipt?.blockNumber });
    expected.push({ id, txHash: receipt?.transactionHash, status, blockNumber: Number(block.number), blockTimestamp: Number(block.timestamp), txIndex: receipt?.transactionIndex });
  }
  assert.deepEqual(recorded.map(({ id, txHash, status, blockNumber, blockTimestamp, txIndex }) => ({ id, txHash, status, blockNumber, blockTimestamp, txIndex })), expected);
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
    const { lines, logger: capturing } = capturingLogger();
    const waited = waiterWith({ logger: capturing }).finish('ethereum', tx.id, [tx.txHash]);
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
    assert.deepEqual(lines.map(({ level, msg, network, txHash }) => ({ level, msg, network, txHash })),
      [{ level: 50, msg: 'another transaction took this transaction\'s nonce: it can never be mined', network: 'ethereum', txHash: tx.txHash }]);
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

/** A lane of its own (a fresh key the node funds): no other test's transactions move its nonce. */
async function freshLane(): Promise<LocalAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await parts.chains.ethereum.client.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 20n)] as never });
  return account;
}

/** A transfer of `account` journaled (not sent) with a fee cap of 2 wei: no node mines it while the base fee is above that. */
async function journaledUnminable(account: LocalAccount) {
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  await sender.fees('ethereum', account.address);
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n },
    () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  return journaled;
}

/** Another version of journaled transaction `id` (its nonce, `fees`), journaled in its place as a re-pricing does (by this process or another instance). */
async function repricedVersion(account: LocalAccount, id: string, previous: Hex, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }) {
  const { client, chainId } = parts.chains.ethereum;
  const nonce = await client.getTransactionCount({ address: account.address, blockTag: 'latest' });
  const rawTx = await account.signTransaction({ chainId, type: 'eip1559', nonce, to: devAccount(9).address, data: '0x', value: 0n, gas: 21_000n, ...fees });
  const txHash = keccak256(rawTx);
  assert.ok(await parts.journal.replace(id, previous, { rawTx, txHash }, Date.now()));
  return { rawTx, txHash };
}

const goodFees = async () => {
  const estimate = await parts.chains.ethereum.client.estimateFeesPerGas();
  return { maxFeePerGas: estimate.maxFeePerGas * 2n, maxPriorityFeePerGas: estimate.maxPriorityFeePerGas };
};

test('a transaction none of whose versions is mined within the wait is answered `signed` with the version recovery sends next, and logged once', async () => {
  const account = await freshLane();
  const first = await journaledUnminable(account);
  const second = await repricedVersion(account, first.id, first.txHash, { maxFeePerGas: 3n, maxPriorityFeePerGas: 2n });
  const { lines, logger: capturing } = capturingLogger();
  // Waited for by both versions, the superseded one named first.
  assert.deepEqual(await waiterWith({ logger: capturing }).finish('ethereum', first.id, [first.txHash, second.txHash], 300), { txHash: second.txHash, status: 'signed' });
  assert.deepEqual(lines.map(({ level, msg, network, id, txHash }) => ({ level, msg, network, id, txHash })),
    [{ level: 40, msg: 'no receipt yet; left for recovery', network: 'ethereum', id: first.id, txHash: second.txHash }], 'one line for the one journaled transaction');
  const reasons = lines[0]?.reasons as string[];
  assert.equal(reasons.length, 2, 'why, for each version');
  for (const reason of reasons) assert.match(reason, /^ReceiptNotFinalError: no receipt for .* within \d+ ms$/);
  assert.deepEqual((await parts.journal.listUnmined('ethereum', account.address)).map((tx) => tx.txHash), [second.txHash], 'still journaled, for recovery');
});

test('a version another instance re-priced and had mined is found through the journal: recorded confirmed by its hash, whether this wait timed out or saw its own version replaced', async () => {
  const { client } = parts.chains.ethereum;
  // The version this process waits for was never broadcast (the node does not know it): its wait runs out.
  const account = await freshLane();
  const first = await journaledUnminable(account);
  const elsewhere = await repricedVersion(account, first.id, first.txHash, await goodFees());
  await client.waitForTransactionReceipt({ hash: await client.sendRawTransaction({ serializedTransaction: elsewhere.rawTx }) });
  const { lines, logger: capturing } = capturingLogger();
  const timedOut = await waiterWith({ logger: capturing }).finish('ethereum', first.id, [first.txHash], 300);
  assert.equal(timedOut.status, 'confirmed');
  assert.equal(timedOut.txHash, elsewhere.txHash, 'answered by the version mined');
  assert.deepEqual(lines, [], 'nothing left for recovery');
  const [recorded] = await parts.journal.listLost('ethereum', new Map([[account.address, 0]]));
  assert.deepEqual({ txHash: recorded?.txHash, status: recorded?.status }, { txHash: elsewhere.txHash, status: 'confirmed' });

  // The version this process waits for is pending; another instance's re-priced version takes its nonce.
  const lane = await freshLane();
  await setAutomine(false);
  try {
    const sent = await journaledAndSent(lane, { to: devAccount(9).address, data: '0x' });
    const waited = waiterWith().finish('ethereum', sent.id, [sent.txHash]);
    // The wait sees it pending (its sender and nonce learnt), then the other version is mined.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pending = await client.getTransaction({ hash: sent.txHash });
    const other = await repricedVersion(lane, sent.id, sent.txHash, {
      maxFeePerGas: (pending.maxFeePerGas ?? 0n) * 2n, maxPriorityFeePerGas: (pending.maxPriorityFeePerGas ?? 0n) * 2n,
    });
    await client.sendRawTransaction({ serializedTransaction: other.rawTx });
    await mine();
    const result = await waited;
    assert.deepEqual({ status: result.status, txHash: result.txHash }, { status: 'confirmed', txHash: other.txHash }, 'not recorded replaced: its own version took the nonce');
    const [mined] = await parts.journal.listLost('ethereum', new Map([[lane.address, 0]]));
    assert.deepEqual({ txHash: mined?.txHash, status: mined?.status }, { txHash: other.txHash, status: 'confirmed' });
  } finally {
    await setAutomine(true);
  }
});

test('a wait whose own version had its nonce taken, while the node fails to answer for the version another instance had mined: left for recovery, never recorded replaced', async () => {
  const { client } = parts.chains.ethereum;
  const lane = await freshLane();
  await setAutomine(false);
  try {
    const sent = await journaledAndSent(lane, { to: devAccount(9).address, data: '0x' });
    // The node does not answer the lookup of the other version's receipt (a cut or slow link): an
    // error, not "no such receipt".
    const unanswered = new Set<string>();
    const failing = new Proxy(client, {
      get: (target, key, receiver) => (key === 'getTransactionReceipt'
        ? (args: { hash: Hex }) => (unanswered.has(args.hash) ? Promise.reject(new Error('fetch failed: socket hang up')) : target.getTransactionReceipt(args))
        : Reflect.get(target, key, receiver)),
    });
    const chains = { ...parts.chains, ethereum: { ...parts.chains.ethereum, client: failing } };
    const waited = waiterWith({ chains }).finish('ethereum', sent.id, [sent.txHash], 5_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pending = await client.getTransaction({ hash: sent.txHash });
    const other = await repricedVersion(lane, sent.id, sent.txHash, {
      maxFeePerGas: (pending.maxFeePerGas ?? 0n) * 2n, maxPriorityFeePerGas: (pending.maxPriorityFeePerGas ?? 0n) * 2n,
    });
    unanswered.add(other.txHash);
    await client.sendRawTransaction({ serializedTransaction: other.rawTx });
    await mine();
    const result = await waited;
    assert.equal(result.status, 'signed', 'not known: left for recovery');
    assert.deepEqual((await parts.journal.listUnmined('ethereum', lane.address)).map((u) => u.txHash), [other.txHash], 'still journaled, by the version mined');
    // Once the node answers, a wait records what the chain has: the other version, confirmed.
    const again = await waiterWith().finish('ethereum', sent.id, [sent.txHash], 5_000);
    assert.deepEqual({ status: again.status, txHash: again.txHash }, { status: 'confirmed', txHash: other.txHash });
  } finally {
    await setAutomine(true);
  }
});

test('two waits for one transaction: the one still waiting when the other ends is told of a re-pricing, and answered by it; neither waits again once answered', async () => {
  const nudged: string[] = [];
  const nudge = (_: unknown, hash: Hex) => {
    nudged.push(`start ${hash}`);
    return () => nudged.push(`stop ${hash}`);
  };
  const managed = { ...parts.chains, ethereum: { ...parts.chains.ethereum, managed: true } };
  const waiter = waiterWith({ chains: managed, nudge });
  const account = await freshLane();
  const first = await journaledUnminable(account);
  // A recovery's short wait beside its sender's long one (ten minutes: the test ends only if it is told).
  const short = waiter.finish('ethereum', first.id, [first.txHash], 200);
  const long = waiter.finish('ethereum', first.id, [first.txHash], 600_000);
  assert.deepEqual(await short, { txHash: first.txHash, status: 'signed' });
  const second = await repricedVersion(account, first.id, first.txHash, await goodFees());
  waiter.repriced(first.id, second.txHash);
  // Another transaction's re-pricing is not this wait's: its version is never waited for here.
  const another: Hex = `0x${'ab'.repeat(32)}`;
  waiter.repriced('another transaction', another);
  await parts.chains.ethereum.client.sendRawTransaction({ serializedTransaction: second.rawTx });
  const answered = await long;
  assert.deepEqual({ status: answered.status, txHash: answered.txHash }, { status: 'confirmed', txHash: second.txHash });
  // Told again after both ended (a late sweep): nobody waits.
  waiter.repriced(first.id, second.txHash);
  waiter.repriced('no such transaction', second.txHash);
  assert.equal(nudged.filter((line) => line === `start ${second.txHash}`).length, 1, `the re-priced version waited for once: ${nudged.join(', ')}`);
  assert.ok(!nudged.includes(`start ${another}`), `another transaction's version never waited for: ${nudged.join(', ')}`);
});
