import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createPublicClient, createWalletClient, http, keccak256, parseGwei, parseTransaction, toHex,
  type Hex, type LocalAccount, type PublicClient, type TransactionSerializable,
} from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { repriceStale, type RepriceStaleParameters } from './reprice-stale.ts';
import { replacementFees } from './replacement-fees.ts';
import type { UnminedTransaction } from './chain-journal.ts';
import { createLogger } from '#shared/logger.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';
import { startRpcProxy } from '../../test/support/rpc-proxy.ts';

// The stale sweep's re-pricing on a real anvil and SQLite journal: what it journals (the bytes recovery
// sends next), what it leaves alone, and what an operator reads in the log.
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: false }); });
after(async () => { await parts?.close(); });

const ceiling = parseGwei('500');
const afterMs = 60_000;
const payee = devAccount(9).address;

/** The log lines a sweep writes, as an operator reads them (pino's JSON, one object a line). */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (chunk: string) => { lines.push(JSON.parse(chunk) as Record<string, unknown>); return true; } } as unknown as NodeJS.WritableStream;
  return { lines, logger: createLogger('info', destination) };
}

/** A lane of its own (a fresh key the node funds, its journal nonce at 0). */
async function freshLane(): Promise<LocalAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await parts.chains.ethereum.client.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 20n)] as never });
  await parts.journal.syncNonce('ethereum', account.address, 0);
  return account;
}

/** A transaction of `account` signed with `fields` at its next journal nonce, journaled (signed at `signedAt`) and not sent. */
async function journaled(account: LocalAccount, fields: Omit<TransactionSerializable, 'chainId' | 'nonce'>, signedAt: number) {
  const entry = await parts.journal.journal({ network: 'ethereum', relayer: account.address, intent: { kind: 'test' } }, signedAt, async (nonce) => {
    const rawTx = await account.signTransaction({ ...fields, chainId: parts.chains.ethereum.chainId, nonce } as TransactionSerializable);
    return { rawTx, txHash: keccak256(rawTx) };
  });
  if (entry === 'released') throw new Error('not released: no authorizations');
  return entry;
}

/** A stale sweep of `account`'s lane as the relayer's recovery runs it, at the time `now`. */
async function sweep(account: LocalAccount, now: number, options: Partial<RepriceStaleParameters> & { pending?: UnminedTransaction[] } = {}) {
  const pending = options.pending ?? await parts.journal.listUnmined('ethereum', account.address);
  const repriced: Array<{ id: string; txHash: string; previous: string }> = [];
  const { lines, logger } = capturingLogger();
  await repriceStale({
    journal: parts.journal, chain: parts.chains.ethereum, account, afterMs, maxFeePerGas: ceiling, now: () => now, logger,
    onRepriced: (tx, previous) => repriced.push({ id: tx.id, txHash: tx.txHash, previous }),
    ...options,
  }, pending);
  return { pending, repriced, lines };
}

const eip1559 = (maxFeePerGas: bigint, maxPriorityFeePerGas: bigint) =>
  ({ type: 'eip1559', to: payee, value: 0n, gas: 21_000n, maxFeePerGas, maxPriorityFeePerGas }) as const;

const latestBaseFee = async () => (await parts.chains.ethereum.client.getBlock({ blockTag: 'latest' })).baseFeePerGas ?? 0n;

test('a transaction unmined for `afterMs` is signed again with its nonce, recipient, data, value and gas and 12.5% higher fees, journaled (not sent), its old version kept', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  // Fees far above today's: the replacement bids 12.5% above them (twice the node's estimate is lower).
  const tx = await journaled(account, {
    type: 'eip1559', to: payee, data: '0xc0ffee', value: 7n, gas: 50_000n, maxFeePerGas: parseGwei('50'), maxPriorityFeePerGas: parseGwei('3'),
  }, signedAt);
  const baseFee = await latestBaseFee();
  const { pending, repriced, lines } = await sweep(account, signedAt + afterMs);

  const [current] = pending;
  assert.ok(current);
  assert.notEqual(current.txHash, tx.txHash);
  assert.deepEqual(repriced, [{ id: tx.id, txHash: current.txHash, previous: tx.txHash }], 'told once, with the hash it replaced');
  assert.deepEqual(current.supersededHashes, [tx.txHash]);
  assert.equal(current.signedAt, signedAt + afterMs, 'signed now');
  assert.equal(current.txHash, keccak256(current.rawTx as Hex));
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), [current], 'what the sweep holds is what the journal holds');
  assert.deepEqual(await parts.journal.hashesOf(tx.id), [current.txHash, tx.txHash]);

  const { chainId, nonce, to, data, value, gas, maxFeePerGas, maxPriorityFeePerGas, type } = parseTransaction(current.rawTx as Hex);
  assert.deepEqual({ chainId, nonce, to, data, value, gas, maxFeePerGas, maxPriorityFeePerGas, type }, {
    chainId: parts.chains.ethereum.chainId, nonce: 0, to: payee.toLowerCase(), data: '0xc0ffee', value: 7n, gas: 50_000n,
    maxFeePerGas: parseGwei('56.25'), maxPriorityFeePerGas: parseGwei('3.375'), type: 'eip1559',
  });
  await assert.rejects(parts.chains.ethereum.client.getTransaction({ hash: current.txHash as Hex }), /could not be found/, 're-pricing journals; the sweep sends');

  assert.deepEqual(lines.map(({ level, msg, network, lane, nonce: n, replaced, txHash, underpriced, baseFee: base, maxFeePerGas: fee, maxPriorityFeePerGas: tip }) =>
    ({ level, msg, network, lane, nonce: n, replaced, txHash, underpriced, baseFee: base, maxFeePerGas: fee, maxPriorityFeePerGas: tip })), [{
    level: 40, msg: 're-priced a stale transaction', network: 'ethereum', lane: account.address, nonce: 0, replaced: tx.txHash, txHash: current.txHash,
    underpriced: false, baseFee: baseFee.toString(), maxFeePerGas: parseGwei('56.25').toString(), maxPriorityFeePerGas: parseGwei('3.375').toString(),
  }]);
});

test('a stale type-4 transaction (account transfers carrying delegations) is re-priced with the same authorization list, still type 4', async () => {
  const account = await freshLane();
  const delegator = privateKeyToAccount(generatePrivateKey());
  const authorization = await delegator.signAuthorization({ chainId: parts.chains.ethereum.chainId, contractAddress: payee, nonce: 0 });
  const signedAt = Date.now();
  const tx = await journaled(account, {
    type: 'eip7702', to: delegator.address, data: '0xc0ffee', value: 0n, gas: 80_000n, maxFeePerGas: parseGwei('50'), maxPriorityFeePerGas: parseGwei('3'),
    authorizationList: [authorization],
  }, signedAt);
  const { pending, repriced } = await sweep(account, signedAt + afterMs);
  const [current] = pending;
  assert.ok(current);
  assert.deepEqual(repriced, [{ id: tx.id, txHash: current.txHash, previous: tx.txHash }]);
  const { type, to, data, gas, maxFeePerGas, authorizationList } = parseTransaction(current.rawTx as Hex);
  assert.deepEqual({ type, to, data, gas, maxFeePerGas }, { type: 'eip7702', to: delegator.address.toLowerCase(), data: '0xc0ffee', gas: 80_000n, maxFeePerGas: parseGwei('56.25') });
  assert.deepEqual(authorizationList, parseTransaction(tx.rawTx as Hex).authorizationList);
  assert.equal(authorizationList?.length, 1);
});

test('a transaction is stale from exactly `afterMs` after its signing: one millisecond earlier it is left as it is', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const tx = await journaled(account, eip1559(parseGwei('50'), parseGwei('3')), signedAt);
  const early = await sweep(account, signedAt + afterMs - 1);
  assert.deepEqual(early.repriced, []);
  assert.deepEqual(early.lines, []);
  assert.deepEqual(await parts.journal.hashesOf(tx.id), [tx.txHash]);
  const due = await sweep(account, signedAt + afterMs);
  assert.deepEqual(due.repriced.map((r) => r.previous), [tx.txHash]);
});

test('one seen executed (an authorization of its version recorded used: its hash was answered, the chain then lost it) is sent as it is however old; below the base fee it is re-priced', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const seen = await journaled(account, eip1559(parseGwei('50'), parseGwei('3')), signedAt);
  const low = await journaled(account, eip1559(1n, 1n), signedAt);
  const asSeen = (await parts.journal.listUnmined('ethereum', account.address)).map((tx) => ({ ...tx, seenExecuted: true }));
  const { repriced } = await sweep(account, signedAt + 10 * afterMs, { pending: asSeen });
  assert.deepEqual(repriced.map((r) => r.previous), [low.txHash], 'only the one no block can mine');
  assert.deepEqual(await parts.journal.hashesOf(seen.id), [seen.txHash], 'its own bytes, its own hash');
});

test('a fresh transaction whose fee cap is below the latest base fee is re-priced at once, at twice the node\'s estimate; one at the base fee is not', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const { client } = parts.chains.ethereum;
  const baseFee = await latestBaseFee();
  assert.ok(baseFee > 2n, `the base fee (${baseFee}) is above a fee cap of 1 wei`);
  const low = await journaled(account, eip1559(1n, 1n), signedAt);
  const atBase = await journaled(account, eip1559(baseFee, 1n), signedAt);
  const expected = replacementFees({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, await client.estimateFeesPerGas(), ceiling);
  assert.ok(expected && !expected.capped);
  const { pending, repriced, lines } = await sweep(account, signedAt);

  assert.deepEqual(repriced.map((r) => r.previous), [low.txHash], 'only the one below the base fee');
  assert.deepEqual(pending.map((tx) => tx.txHash), [repriced[0]?.txHash, atBase.txHash]);
  const { maxFeePerGas, maxPriorityFeePerGas, nonce } = parseTransaction(pending[0]?.rawTx as Hex);
  assert.deepEqual({ maxFeePerGas, maxPriorityFeePerGas, nonce }, { maxFeePerGas: expected.maxFeePerGas, maxPriorityFeePerGas: expected.maxPriorityFeePerGas, nonce: 0 });
  assert.deepEqual(lines.map(({ msg, underpriced, baseFee: base }) => ({ msg, underpriced, baseFee: base })),
    [{ msg: 're-priced a stale transaction', underpriced: true, baseFee: baseFee.toString() }]);
});

test('a transaction whose nonce the chain already used is left alone however old; the one at the chain\'s nonce is re-priced', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const taken = await journaled(account, eip1559(parseGwei('50'), parseGwei('3')), signedAt);
  const next = await journaled(account, eip1559(parseGwei('50'), parseGwei('3')), signedAt);
  // Another transaction of the lane used nonce 0 (mined): the journaled one can never be.
  const wallet = createWalletClient({ account, chain: foundry, transport: http(parts.anvil.url) });
  await parts.chains.ethereum.client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: payee, value: 1n, nonce: 0 }) });
  const { repriced } = await sweep(account, signedAt + 10 * afterMs);
  assert.deepEqual(repriced.map((r) => r.previous), [next.txHash]);
  assert.deepEqual(await parts.journal.hashesOf(taken.id), [taken.txHash], 'its receipt decides, not a re-pricing');
});

test('at the fee ceiling a stale transaction is not re-priced (logged); below it, a re-pricing is capped at the ceiling (logged)', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  // A ceiling below twice the node's estimate, the fee a replacement would bid.
  const estimate = await parts.chains.ethereum.client.estimateFeesPerGas();
  const low = estimate.maxFeePerGas;
  const atCeiling = await journaled(account, eip1559(low, 1n), signedAt);
  const belowCeiling = await journaled(account, eip1559(1n, 1n), signedAt);
  const expected = replacementFees({ maxFeePerGas: 1n, maxPriorityFeePerGas: 1n }, estimate, low);
  assert.ok(expected?.capped && expected.maxFeePerGas === low);
  const baseFee = (await latestBaseFee()).toString();
  const { pending, repriced, lines } = await sweep(account, signedAt + afterMs, { maxFeePerGas: low });

  assert.deepEqual(repriced.map((r) => r.previous), [belowCeiling.txHash]);
  assert.deepEqual(await parts.journal.hashesOf(atCeiling.id), [atCeiling.txHash]);
  const { maxFeePerGas, maxPriorityFeePerGas } = parseTransaction(pending[1]?.rawTx as Hex);
  assert.deepEqual({ maxFeePerGas, maxPriorityFeePerGas }, { maxFeePerGas: low, maxPriorityFeePerGas: expected.maxPriorityFeePerGas });
  assert.deepEqual(lines.map(({ level, msg, network, lane, txHash, maxFeePerGas: fee, baseFee: base }) => ({ level, msg, network, lane, txHash, maxFeePerGas: fee, baseFee: base })), [
    { level: 40, msg: 'a stale transaction is at the fee ceiling (MAX_FEE_PER_GAS_GWEI): not re-priced', network: 'ethereum', lane: account.address, txHash: atCeiling.txHash, maxFeePerGas: low.toString(), baseFee },
    { level: 40, msg: 're-priced fee capped at MAX_FEE_PER_GAS_GWEI', network: 'ethereum', lane: account.address, txHash: belowCeiling.txHash, maxFeePerGas: low.toString(), baseFee },
    { level: 40, msg: 're-priced a stale transaction', network: 'ethereum', lane: account.address, txHash: pending[1]?.txHash, maxFeePerGas: low.toString(), baseFee },
  ]);
});

test('a re-pricing another instance journaled first wins: the sweep holding the older version journals nothing and keeps what it holds', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const tx = await journaled(account, eip1559(parseGwei('50'), parseGwei('3')), signedAt);
  const ours = await parts.journal.listUnmined('ethereum', account.address);
  const theirs = await sweep(account, signedAt + afterMs);
  assert.equal(theirs.repriced.length, 1);
  const late = await sweep(account, signedAt + afterMs + 1, { pending: ours });
  assert.deepEqual(late.repriced, [], 'nobody told of bytes that are never sent');
  assert.deepEqual(late.lines, []);
  assert.deepEqual(ours.map(({ txHash, supersededHashes, signedAt: at }) => ({ txHash, supersededHashes, signedAt: at })),
    [{ txHash: tx.txHash, supersededHashes: [], signedAt }], 'its list unchanged');
  assert.deepEqual(await parts.journal.hashesOf(tx.id), [theirs.repriced[0]?.txHash, tx.txHash]);
});

test('a legacy (pre-EIP-1559) transaction is left as it is', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const tx = await journaled(account, { type: 'legacy', to: payee, value: 0n, gas: 21_000n, gasPrice: 1n }, signedAt);
  const { repriced, lines } = await sweep(account, signedAt + afterMs);
  assert.deepEqual(repriced, []);
  assert.deepEqual(lines, []);
  assert.deepEqual(await parts.journal.hashesOf(tx.id), [tx.txHash]);
});

test('nothing is re-priced while the node does not answer: neither its head nor its fee estimate', async () => {
  const account = await freshLane();
  const signedAt = Date.now();
  const tx = await journaled(account, eip1559(1n, 1n), signedAt);
  for (const lacking of [['eth_getBlockByNumber'], ['eth_getTransactionCount'], ['eth_maxPriorityFeePerGas', 'eth_gasPrice']]) {
    const proxy = await startRpcProxy(parts.anvil.url, { lacking });
    try {
      const client = createPublicClient({ chain: foundry, transport: http(proxy.url, { retryCount: 0 }) }) as PublicClient;
      const { repriced, lines } = await sweep(account, signedAt + afterMs, { chain: { network: 'ethereum', chainId: parts.chains.ethereum.chainId, client } });
      assert.deepEqual(repriced, [], lacking.join());
      assert.deepEqual(lines, [], lacking.join());
      assert.deepEqual(await parts.journal.hashesOf(tx.id), [tx.txHash], lacking.join());
    } finally {
      await proxy.close();
    }
  }
});

test('a lane with nothing pending costs the node no call', async () => {
  const account = await freshLane();
  const proxy = await startRpcProxy(parts.anvil.url);
  try {
    const client = createPublicClient({ chain: foundry, transport: http(proxy.url, { retryCount: 0 }) }) as PublicClient;
    await sweep(account, Date.now(), { chain: { network: 'ethereum', chainId: parts.chains.ethereum.chainId, client } });
    assert.deepEqual([...proxy.calls], []);
  } finally {
    await proxy.close();
  }
});
