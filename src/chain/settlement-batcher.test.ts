import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFunctionData, encodeEventTopics, type Address, type Hex, type LocalAccount, type Log, type TransactionReceipt } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSettlementBatcher, type SettlementBatcherDeps } from './settlement-batcher.ts';
import { createLanes } from './relayer-lanes.ts';
import type { TransactionCall, TransactionSender } from './transaction-sender.ts';
import type { ReceiptWaiter } from './receipt-waiter.ts';
import type { RelayResult, SettlementItem } from './relay-types.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { createLogger } from '#shared/logger.ts';
import { DomainError } from '#shared/errors.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';

// The settlement batcher and its lanes, on a real anvil (the lanes' balances, the block gas limit);
// the transaction sender and the receipt waiter it drives are recorded instead (their own tests run them).
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: true }); });
after(async () => { await parts?.close(); });

const logger = createLogger('silent');
const settlement: Address = '0x5e771e0000000000000000000000000000000001';
const token: Address = '0x70ce000000000000000000000000000000000002';
let nextNonce = 1;
const item = (): SettlementItem => ({
  token, from: devAccount(7).address, to: devAccount(8).address, value: 1n, validBefore: 2n ** 40n,
  nonce: `0x${(nextNonce++).toString(16).padStart(64, '0')}`, signature: `0x${'11'.repeat(32)}${'22'.repeat(32)}1b`,
});

interface Journaled { lane: Address; nonces: readonly string[]; call: TransactionCall; txHash: Hex }

/** A sender that journals in memory (all, or only `keep`'s authorizations) and logs each step; a waiter answering from `receiptOf`. */
function recorded(options: { keep?: (nonce: string) => boolean; receiptOf?: (tx: Journaled) => Promise<TransactionReceipt | undefined> } = {}) {
  const steps: string[] = [];
  const journaled: Journaled[] = [];
  const sender: Pick<TransactionSender, 'fees' | 'journal' | 'broadcast'> = {
    async fees(_, account) {
      steps.push(`fees ${account}`);
      return { maxFeePerGas: 2n, maxPriorityFeePerGas: 1n };
    },
    async journal(_, account, entry, _fees, call) {
      const included = (entry.authorizationNonces ?? []).filter((nonce) => options.keep?.(nonce) ?? true);
      if (included.length === 0) return 'released';
      const txHash: Hex = `0x${(journaled.length + 1).toString(16).padStart(64, '0')}`;
      journaled.push({ lane: account.address, nonces: included, call: call(included), txHash });
      steps.push(`journal ${txHash}`);
      return { id: txHash, rawTx: '0x00', txHash, included };
    },
    async broadcast(_, rawTx) {
      steps.push(`broadcast ${rawTx}`);
    },
  };
  const waiter: Pick<ReceiptWaiter, 'finish'> = {
    async finish(_, id, hashes): Promise<RelayResult> {
      steps.push(`wait ${id}`);
      const tx = journaled.find((j) => j.txHash === hashes[0]) as Journaled;
      const receipt = await options.receiptOf?.(tx);
      return receipt ? { txHash: tx.txHash, status: 'confirmed', receipt } : { txHash: tx.txHash, status: 'signed' };
    },
  };
  return { steps, journaled, sender, waiter };
}

function batcherWith(fakes: ReturnType<typeof recorded>, deps: Partial<SettlementBatcherDeps> & { accounts?: LocalAccount[] } = {}) {
  const sizes: number[] = [];
  const batcher = createSettlementBatcher({
    chains: parts.chains, sender: fakes.sender, waiter: fakes.waiter,
    lanes: createLanes({ chains: parts.chains, lanes: deps.accounts ?? [devAccount(0)], logger }),
    onBatch: (_, size) => sizes.push(size), ...deps,
  });
  return { batcher, sizes };
}

/** A successful receipt whose logs show `AuthorizationUsed` for these items. */
function receiptUsing(executed: SettlementItem[]): TransactionReceipt {
  const logs = executed.map((it, logIndex) => ({
    address: it.token, data: '0x', logIndex, blockNumber: 1n, blockHash: `0x${'ab'.repeat(32)}`, transactionHash: `0x${'cd'.repeat(32)}`, transactionIndex: 0, removed: false,
    topics: encodeEventTopics({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', args: { authorizer: it.from, nonce: it.nonce } }),
  })) as unknown as Log[];
  return { status: 'success', logs, transactionHash: `0x${'cd'.repeat(32)}` } as TransactionReceipt;
}

test('transfers accepted within one window share one settlement transaction, journaled, then broadcast, then waited for', async () => {
  const fakes = recorded();
  const { batcher, sizes } = batcherWith(fakes, { batch: { windowMs: 100, maxItems: 100 } });
  const items = [item(), item(), item()];
  const results = await Promise.all(items.map((it) => batcher.settle('ethereum', settlement, it)));
  assert.equal(fakes.journaled.length, 1, 'one transaction');
  assert.deepEqual(fakes.journaled[0]?.nonces, items.map((it) => it.nonce));
  assert.equal(fakes.journaled[0]?.call.to, settlement, 'several items go through the settlement contract');
  assert.deepEqual(sizes, [3]);
  const hash = fakes.journaled[0]?.txHash;
  assert.deepEqual(fakes.steps, [`fees ${devAccount(0).address}`, `journal ${hash}`, 'broadcast 0x00', `wait ${hash}`]);
  assert.deepEqual(results, items.map(() => ({ txHash: hash, status: 'signed' })), 'no receipt yet: each answered signed');
  assert.deepEqual(batcher.queue(), { ethereum: 0 });
});

test('a full batch closes at once, whatever its window; the next transfer opens the next batch; a batch of one goes to its token', async () => {
  const fakes = recorded();
  // A minute's window: only a full batch can go out within the test.
  const { batcher } = batcherWith(fakes, { batch: { windowMs: 60_000, maxItems: 2 } });
  const [a, b, c, d] = [item(), item(), item(), item()];
  await Promise.all([a, b].map((it) => batcher.settle('ethereum', settlement, it)));
  assert.deepEqual(fakes.journaled.map((j) => j.nonces), [[a.nonce, b.nonce]]);
  const third = batcher.settle('ethereum', settlement, c);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.deepEqual(batcher.queue(), { ethereum: 1 }, 'waiting in the open batch');
  assert.equal(fakes.journaled.length, 1);
  await Promise.all([third, batcher.settle('ethereum', settlement, d)]);
  assert.deepEqual(fakes.journaled.map((j) => j.nonces), [[a.nonce, b.nonce], [c.nonce, d.nonce]]);

  const single = recorded();
  await batcherWith(single, { batch: { windowMs: 5, maxItems: 100 } }).batcher.settle('ethereum', settlement, item());
  assert.equal(single.journaled[0]?.call.to, token, 'a batch of one is sent to its token directly');
});

test('a contract account\'s signature goes alone, at once, in the token\'s bytes form; the transfers around it share their batch', async () => {
  const fakes = recorded({ receiptOf: async (tx) => receiptUsing(tx.nonces.map((nonce) => ({ ...item(), nonce: nonce as Hex }))) });
  const { batcher, sizes } = batcherWith(fakes, { batch: { windowMs: 200, maxItems: 100 } });
  // 130 bytes (two owners of a Safe): only `transferWithAuthorization(…, bytes signature)` takes it.
  const wallet: SettlementItem = { ...item(), signature: `0x${'33'.repeat(130)}`, alone: true };
  const [a, b] = [item(), item()];
  const results = await Promise.all([a, wallet, b].map((it) => batcher.settle('ethereum', settlement, it)));
  assert.deepEqual(fakes.journaled.map((j) => j.nonces), [[wallet.nonce], [a.nonce, b.nonce]], 'sent before the window closes, never in the batch');
  assert.deepEqual(sizes, [1, 2]);
  const [alone, batch] = fakes.journaled;
  assert.equal(alone?.call.to, token);
  const call = decodeFunctionData({ abi: vixpTokenAbi, data: alone.call.data });
  assert.equal(call.functionName, 'transferWithAuthorization');
  assert.deepEqual(call.args, [wallet.from, wallet.to, wallet.value, 0n, wallet.validBefore, wallet.nonce, wallet.signature]);
  assert.equal(alone.call.gas, 180_000n + 200_000n + 16n * 130n);
  assert.equal(batch?.call.to, settlement);
  assert.deepEqual(results.map((r) => r.status), ['confirmed', 'confirmed', 'confirmed']);
});

test('each transfer is answered from its batch\'s receipt: confirmed when executed, failed when not, refused when released before journaling', async () => {
  const [executed, skipped, released] = [item(), item(), item()];
  const fakes = recorded({ keep: (nonce) => nonce !== released.nonce, receiptOf: async () => receiptUsing([executed]) });
  const { batcher, sizes } = batcherWith(fakes, { batch: { windowMs: 50, maxItems: 100 } });
  const [ok, notExecuted, refused] = await Promise.allSettled([executed, skipped, released].map((it) => batcher.settle('ethereum', settlement, it)));
  assert.equal(ok?.status === 'fulfilled' && ok.value.status, 'confirmed');
  assert.equal(notExecuted?.status === 'fulfilled' && notExecuted.value.status, 'failed');
  assert.ok(refused?.status === 'rejected' && refused.reason instanceof DomainError && refused.reason.code === 'chain.transaction_failed');
  assert.deepEqual(fakes.journaled[0]?.nonces, [executed.nonce, skipped.nonce]);
  assert.deepEqual(sizes, [2]);
});

test('while a batch waits for its receipt on one lane, the next batch goes out on another lane', async () => {
  let release: () => void = () => undefined;
  const firstMined = new Promise<undefined>((resolve) => { release = () => resolve(undefined); });
  const fakes = recorded({ receiptOf: (tx) => (tx.txHash.endsWith('1') ? firstMined : Promise.resolve(undefined)) });
  const { batcher } = batcherWith(fakes, { batch: { windowMs: 5, maxItems: 100 }, accounts: [devAccount(0), devAccount(1)] });
  const first = batcher.settle('ethereum', settlement, item());
  while (fakes.journaled.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
  await batcher.settle('ethereum', settlement, item());
  release();
  await first;
  assert.deepEqual(fakes.journaled.map((j) => j.lane), [devAccount(0).address, devAccount(1).address]);
});

test('on a node we do not run, a lane without gas money is not used; on a chain we run, every lane is', async () => {
  const unfunded = privateKeyToAccount(generatePrivateKey());
  const accounts = [devAccount(0), unfunded, devAccount(1)];
  const notOurs = { ...parts.chains, ethereum: { ...parts.chains.ethereum, managed: false } };
  const external = await createLanes({ chains: notOurs, lanes: accounts, logger })('ethereum');
  assert.deepEqual(external.map((lane) => lane.account.address), [devAccount(0).address, devAccount(1).address]);
  const ours = await createLanes({ chains: parts.chains, lanes: accounts, logger })('ethereum');
  assert.deepEqual(ours.map((lane) => lane.account.address), accounts.map((a) => a.address));
});
