import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { createTestClient, encodeDeployData, encodeFunctionData, getAddress, hexToBigInt, http, keccak256, stringToHex, toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { createRelayerRecovery, type RelayerRecoveryDeps } from './relayer-recovery.ts';
import type { HeadSource } from './head-source.ts';
import { createTransactionSender } from './transaction-sender.ts';
import { createReceiptWaiter } from './receipt-waiter.ts';
import { encodeSettlement } from './settlement-calldata.ts';
import { accountBatchLayout } from './account-settlement.ts';
import { signAccountTransfer, signDelegation } from './account-transfer.ts';
import { vixpayAccountAbi, vixpayAccountBytecode } from '../gen/contracts/vixpay-account.ts';
import { vixpAccountSettlementAbi, vixpAccountSettlementBytecode } from '../gen/contracts/vixp-account-settlement.ts';
import { tetherLikeAbi, tetherLikeBytecode } from '../../test/support/gen/test-tokens.ts';
import { accountNonce } from '../wallet/authorization-nonce.ts';
import type { SettlementItem } from './relay-types.ts';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { openStore } from '../store/db.ts';
import { createChainJournal } from '../store/chain-journal-repository.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import type { NetworkName } from '#shared/networks.ts';
import { createLogger } from '#shared/logger.ts';
import { devAccount, receiptOf, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';
import { waitFor } from '../../test/support/wait-for.ts';

// Recovery on a real anvil and SQLite journal: what a crash between journaling and broadcasting leaves.
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: false }); });
after(async () => { await parts?.close(); });

const logger = createLogger('silent');

/** The log lines recovery writes, as an operator reads them (pino's JSON, one object a line). */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (chunk: string) => { lines.push(JSON.parse(chunk) as Record<string, unknown>); return true; } } as unknown as NodeJS.WritableStream;
  return { lines, logger: createLogger('info', destination) };
}

function partsFor(account: LocalAccount, clock: () => number = Date.now, deps: Partial<RelayerRecoveryDeps> & { receiptTimeoutMs?: number } = {}) {
  const journal = deps.journal ?? parts.journal;
  const chains = deps.chains ?? parts.chains;
  const sender = createTransactionSender({ journal, chains, platform: account, clock, logger });
  const waiter = createReceiptWaiter({ journal, chains, clock, logger, receiptTimeoutMs: deps.receiptTimeoutMs ?? 10_000 });
  const recovery = createRelayerRecovery({
    journal, chains, lanes: [account], clock, logger, sender, waiter,
    repricing: { afterMs: 30_000, maxFeePerGas: 500n * 10n ** 9n }, ...deps,
  });
  /** Journaled and never broadcast: the process stopped right after the journal's commit. */
  const journaledOnly = async () => {
    const fees = await sender.fees('ethereum', account.address);
    const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, fees, () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
    if (journaled === 'released') throw new Error('not released: no authorizations');
    return journaled;
  };
  return { sender, waiter, recovery, journaledOnly };
}

/** A lane of its own (a fresh key the node funds): no other test's transactions move its nonce. */
async function freshLane(): Promise<LocalAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  await parts.chains.ethereum.client.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 20n)] as never });
  return account;
}

test('a journaled transaction never broadcast is sent by `recover` with its journaled bytes, mined once and recorded; nothing is sent twice', async () => {
  const account = devAccount(1);
  const { client } = parts.chains.ethereum;
  const { sender, recovery, journaledOnly } = partsFor(account);
  const journaled = await journaledOnly();
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/, 'the node never saw it');
  assert.equal(await recovery.recover('ethereum'), 1);
  const receipt = await client.getTransactionReceipt({ hash: journaled.txHash });
  assert.equal(receipt.status, 'success', 'the journaled hash is the one mined');
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  assert.equal(await recovery.recover('ethereum'), 0, 'recorded: not sent again');
  assert.equal(await client.getTransactionCount({ address: account.address }), 1, 'one transaction of the lane on chain');
  // The nonce sequence goes on after it, without a gap.
  const next = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  assert.equal((await client.getTransaction({ hash: next.txHash })).nonce, 1);
});

test('heads pushed: a journaled transaction another process broadcast, mined 40 blocks before `recover` and past every block this process read, is found by its own receipt and recorded at once', async () => {
  const pushed = await startChainParts({ managed: false, pushedHeads: true });
  try {
    const { client, heads } = pushed.chains.ethereum;
    await waitFor(() => heads?.up() === true, { timeoutMs: 10_000, message: 'the subscription is made' });
    const account = devAccount(3);
    const { waiter, recovery, journaledOnly } = partsFor(account, Date.now, { journal: pushed.journal, chains: pushed.chains, receiptTimeoutMs: 3_000 });
    // Journaled, then broadcast and mined while this process was down: its journal row still says signed.
    const journaled = await journaledOnly();
    await client.sendRawTransaction({ serializedTransaction: journaled.rawTx });
    const mined = await receiptOf(client, journaled.txHash);
    await createTestClient({ mode: 'anvil', transport: http(pushed.anvil.url) }).mine({ blocks: 40 });
    // This process's watcher reads the blocks after that for a transaction of its own.
    const other = await createTransactionSender({ journal: pushed.journal, chains: pushed.chains, platform: devAccount(4), clock: Date.now, logger })
      .send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
    assert.equal((await waiter.finish('ethereum', other.id, [other.txHash])).status, 'confirmed');
    const startedAt = Date.now();
    assert.equal(await recovery.recover('ethereum'), 1, 'finished by recovery');
    assert.ok(Date.now() - startedAt < 3_000, 'within its first wait: not after it ran out');
    assert.deepEqual(await pushed.journal.listUnmined('ethereum', account.address), []);
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).blockNumber, mined.blockNumber);
  } finally {
    await pushed.close();
  }
});

test('`rebroadcastStale` sends the journaled transactions older than the age given, not the younger ones', async () => {
  const account = devAccount(2);
  const { client } = parts.chains.ethereum;
  let now = Date.now();
  const { recovery, journaledOnly } = partsFor(account, () => now);
  const journaled = await journaledOnly();
  now += 5_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 0, 'exactly 5 s old: not older than 5 s');
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/, 'too young: left to its sender');
  now += 10_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 1);
  assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
});

test('on a chain we run, `recover` first has the lost blocks rebuilt (the anvil rebuild injected); on a node we do not run, never', async () => {
  const rebuilt: NetworkName[] = [];
  const rebuildLostBlocks = async (network: NetworkName) => { rebuilt.push(network); return 2; };
  const account = devAccount(3);
  assert.equal(await partsFor(account, Date.now, { rebuildLostBlocks }).recovery.recover('ethereum'), 0);
  assert.deepEqual(rebuilt, []);
  const managed = { ...parts.chains, ethereum: { ...parts.chains.ethereum, managed: true } };
  assert.equal(await partsFor(account, Date.now, { rebuildLostBlocks, chains: managed }).recovery.recover('ethereum'), 2, 'the rebuilt transactions count as finished');
  assert.deepEqual(rebuilt, ['ethereum']);
});

test('a stale transaction whose fee cap is below the base fee is re-priced (same nonce, journaled first), and the version mined is recorded', async () => {
  const account = devAccount(4);
  const { client } = parts.chains.ethereum;
  let now = Date.now();
  let repriced = 0;
  // Two lanes: the stale transaction is re-signed by its own lane's account.
  const { sender, waiter, recovery } = partsFor(account, () => now, { onReprice: () => { repriced++; }, lanes: [devAccount(8), account] });
  await sender.fees('ethereum', account.address);
  // Signed with a fee cap of 2 wei: no node takes it while the base fee is above that.
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n },
    () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  await sender.broadcast('ethereum', journaled.rawTx);
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/, 'refused by the node');
  // Its sender still waits for it, by the hash it signed: told of the re-priced version, it sees that one mined.
  const waiting = waiter.finish('ethereum', journaled.id, [journaled.txHash], 4_000);
  now += 60_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 1);
  assert.equal(repriced, 1);
  assert.equal((await waiting).status, 'confirmed');
  const hashes = await parts.journal.hashesOf(journaled.id);
  assert.equal(hashes.length, 2, 'the re-priced version, then the one it superseded');
  assert.equal(hashes[1], journaled.txHash);
  const mined = await client.getTransaction({ hash: hashes[0] as `0x${string}` });
  assert.equal(mined.nonce, 0, 'the same nonce');
  assert.equal(mined.from.toLowerCase(), account.address.toLowerCase(), 'signed by its lane');
  assert.ok(mined.blockNumber !== null);
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
});

test('`recover` and `rebroadcastStale` log what they sent again, per lane, and nothing when there was nothing', async () => {
  const account = devAccount(6);
  let now = Date.now();
  const { lines, logger: capturing } = capturingLogger();
  const { recovery, journaledOnly } = partsFor(account, () => now, { logger: capturing });
  assert.equal(await recovery.recover('ethereum'), 0);
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 0);
  assert.equal(lines.length, 0);
  await journaledOnly();
  assert.equal(await recovery.recover('ethereum'), 1);
  assert.deepEqual(lines.map(({ msg, network, lane, pending, finished }) => ({ msg, network, lane, pending, finished })),
    [{ msg: 'recovered journaled transactions', network: 'ethereum', lane: account.address, pending: 1, finished: 1 }]);
  lines.length = 0;
  await journaledOnly();
  now += 10_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 1);
  assert.deepEqual(lines.map(({ msg, network, lane, pending, finished }) => ({ msg, network, lane, pending, finished })),
    [{ msg: 'rebroadcast journaled transactions left without a receipt', network: 'ethereum', lane: account.address, pending: 1, finished: 1 }]);
});

test('a node we do not run that lost the block of a transaction recorded mined a minute ago: the stale sweep sends the journaled bytes again, at once; so does `recover`', async () => {
  const account = devAccount(7);
  const { client } = parts.chains.ethereum;
  let now = Date.now();
  const { lines, logger: capturing } = capturingLogger();
  const { recovery, journaledOnly } = partsFor(account, () => now, { logger: capturing });
  const lose = async (run: () => Promise<void>) => {
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
    await run();
    await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
  };
  let journaled!: Awaited<ReturnType<typeof journaledOnly>>;
  await lose(async () => {
    journaled = await journaledOnly();
    assert.equal(await recovery.recover('ethereum'), 1);
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
    // A sweep while the node still has it: it sees the node's head (nothing lost).
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 0);
  });
  // The node lost the block (reverted to before it): the lane's nonce on chain is 0 again.
  assert.equal(await client.getTransactionCount({ address: account.address }), 0);
  lines.length = 0;
  now += 60_000;
  await lose(async () => {
    // Younger than the age asked: sent again anyway, it holds the lane's next nonce.
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 1);
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success', 'the journaled bytes, the same hash');
    assert.equal(await client.getTransactionCount({ address: account.address }), 1);
    assert.deepEqual(lines.map(({ level, msg, lost, chainNonce, pending, finished }) => ({ level, msg, lost, chainNonce, pending, finished })), [
      { level: 50, msg: 'the chain lost transactions recorded as mined; sending them again', lost: 1, chainNonce: 0, pending: undefined, finished: undefined },
      { level: 30, msg: 'sent again the transactions the chain lost', lost: undefined, chainNonce: undefined, pending: 1, finished: 1 },
    ]);
    assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  });
  // Lost again, found by `recover` (a restart): the same bytes, once.
  assert.equal(await recovery.recover('ethereum'), 1);
  assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
  assert.equal(await client.getTransactionCount({ address: account.address }), 1);
  // Nothing lost now: the sweep reads the nonce and sends nothing.
  lines.length = 0;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 0);
  assert.equal(lines.length, 0);
});

test('a sweep that saw the node go back but could not get through (its database down) leaves the sign standing: the next sweep sends the lost transaction again', async () => {
  const account = privateKeyToAccount(generatePrivateKey());
  const { client } = parts.chains.ethereum;
  await client.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 18n)] as never });
  let now = Date.now();
  let databaseDown = false;
  const journal = {
    ...parts.journal,
    async reopenFrom(...args: Parameters<typeof parts.journal.reopenFrom>) {
      if (databaseDown) throw new Error('the database does not answer');
      return parts.journal.reopenFrom(...args);
    },
  };
  const { recovery, journaledOnly } = partsFor(account, () => now, { journal });
  const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
  const journaled = await journaledOnly();
  assert.equal(await recovery.recover('ethereum'), 1);
  assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 0, 'a sweep while the node still has it');
  await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
  now += 60_000;
  databaseDown = true;
  await assert.rejects(recovery.rebroadcastStale('ethereum', 10 * 60_000), /does not answer/);
  databaseDown = false;
  assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 1, 'the next sweep, with no new sign, sends it again');
  assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
  assert.equal(await client.getTransactionCount({ address: account.address }), 1);
});

test('a node we do not run that went back and mined past its old head before the next lane check (a rollback shorter than 10 s, no head below one seen): the lanes\' nonces read 10 s on show it and the lost transaction is sent again', async () => {
  const account = await freshLane();
  const { client } = parts.chains.ethereum;
  const anvil = createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) });
  let now = Date.now();
  const { recovery, journaledOnly } = partsFor(account, () => now);
  const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
  const journaled = await journaledOnly();
  assert.equal(await recovery.recover('ethereum'), 1);
  const minedAt = (await client.getTransactionReceipt({ hash: journaled.txHash })).blockNumber;
  assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 0, 'a sweep while the node still has it');
  // Lost, and the chain is longer than before by the next read: no head below one seen shows it.
  await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
  await anvil.mine({ blocks: 3 });
  assert.ok((await client.getBlockNumber({ cacheTime: 0 })) > minedAt);
  assert.equal(await client.getTransactionCount({ address: account.address }), 0);
  now += 10_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 1, 'sent again at the next lane check');
  assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success', 'the journaled bytes, the same hash');
  assert.equal(await client.getTransactionCount({ address: account.address }), 1);
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
});

test('heads pushed: a node that went back and mined past its old head before the next sweep: the heads that did not follow their parent are the sign, and the lost transaction is sent again', async () => {
  const pushed = await startChainParts({ managed: false, pushedHeads: true });
  try {
    const { client, heads } = pushed.chains.ethereum;
    await waitFor(() => heads?.up() === true, { timeoutMs: 10_000, message: 'the subscription is made' });
    const anvil = createTestClient({ mode: 'anvil', transport: http(pushed.anvil.url) });
    const account = privateKeyToAccount(generatePrivateKey());
    await client.request({ method: 'anvil_setBalance' as never, params: [account.address, toHex(10n ** 18n)] as never });
    let now = Date.now();
    const { recovery, journaledOnly } = partsFor(account, () => now, { journal: pushed.journal, chains: pushed.chains, receiptTimeoutMs: 3_000 });
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
    const journaled = await journaledOnly();
    assert.equal(await recovery.recover('ethereum'), 1);
    const minedAt = (await client.getTransactionReceipt({ hash: journaled.txHash })).blockNumber;
    await waitFor(() => heads?.latest()?.number === minedAt, { timeoutMs: 10_000, message: 'its block pushed' });
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 0, 'a sweep while the node still has it');
    await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await anvil.mine({ blocks: 3 });
    await waitFor(() => (heads?.latest()?.number ?? 0n) > minedAt, { timeoutMs: 10_000, message: 'pushed past the old head' });
    now += 2_000;
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 1, 'sent again at the next sweep');
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
    assert.equal(await client.getTransactionCount({ address: account.address }), 1);
  } finally {
    await pushed.close();
  }
});

test('heads pushed, the stale sweep reads the lanes\' nonces on a head below the highest block the network showed, then counts from that head; on a subscription made again or a head that did not follow; and every 5 minutes', async () => {
  const busy = devAccount(6);
  const { recovery, journaledOnly } = partsFor(busy);
  await journaledOnly();
  assert.equal(await recovery.recover('ethereum'), 1, 'a transaction of the lane mined and recorded now');
  const asked: string[] = [];
  // What the network shows, set by the test: the head pushed last and the highest block its answers showed.
  let head = 100n;
  let shown: bigint | undefined = 100n;
  let subscriptions = 1;
  let wentBack = 0;
  const heads = { up: () => true, latest: () => ({ number: head }), subscriptions: () => subscriptions, wentBack: () => wentBack };
  const chains = {
    ...parts.chains,
    ethereum: {
      ...parts.chains.ethereum, managed: false, heads: heads as unknown as HeadSource,
      highestSince: () => { const answered = shown; shown = undefined; return answered; },
      client: new Proxy(parts.chains.ethereum.client, {
        get(target, key, receiver) {
          if (key !== 'getTransactionCount') return Reflect.get(target, key, receiver) as unknown;
          return (args: Parameters<typeof target.getTransactionCount>[0]) => { asked.push(args.address); return target.getTransactionCount(args); };
        },
      }),
    },
  };
  let now = Date.now();
  const sweep = partsFor(busy, () => now, { chains }).recovery;
  const readAt = async (step: () => void) => {
    asked.length = 0;
    step();
    now += 2_000;
    assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
    return asked.length > 0;
  };
  assert.equal(await readAt(() => {}), false, 'the head at the highest block shown');
  assert.equal(await readAt(() => { head = 101n; }), false, 'a head above it');
  assert.equal(await readAt(() => { head = 100n; }), true, 'a head below the highest seen');
  assert.equal(await readAt(() => {}), false, 'counted from that head: the same head is no new sign');
  assert.equal(await readAt(() => { shown = 103n; head = 102n; }), true, 'an answer showed a block above the head');
  assert.equal(await readAt(() => { head = 103n; shown = 103n; }), false);
  assert.equal(await readAt(() => { subscriptions = 2; }), true, 'the subscription made again');
  assert.equal(await readAt(() => { wentBack = 1; }), true, 'a head that did not follow the one before');
  assert.equal(await readAt(() => {}), false);
  assert.equal(await readAt(() => { now += 5 * 60_000 - 6_000; }), false, 'one sweep short of five minutes');
  assert.equal(await readAt(() => {}), true, 'five minutes since the last read');
});

test('polled, the stale sweep reads the nonces of the lanes with a transaction mined within 10 minutes, at most every 10 s, never an idle lane\'s; on a chain we run, nothing', async () => {
  const busy = devAccount(5);
  const idle = privateKeyToAccount(generatePrivateKey());
  const { recovery, journaledOnly } = partsFor(busy);
  await journaledOnly();
  assert.equal(await recovery.recover('ethereum'), 1, 'a transaction of the busy lane mined and recorded now');
  const asked: string[] = [];
  const counted = (managed: boolean) => ({
    ...parts.chains,
    ethereum: {
      ...parts.chains.ethereum, managed,
      client: new Proxy(parts.chains.ethereum.client, {
        get(target, key, receiver) {
          if (key !== 'getTransactionCount') return Reflect.get(target, key, receiver) as unknown;
          return (args: Parameters<typeof target.getTransactionCount>[0]) => { asked.push(args.address); return target.getTransactionCount(args); };
        },
      }),
    },
  });
  let now = Date.now();
  const sweep = partsFor(busy, () => now, { chains: counted(false), lanes: [busy, idle] }).recovery;
  assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
  now += 2_000;
  assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
  assert.deepEqual(asked, [], 'within 10 s of the first sweep: no nonce read');
  now += 8_000;
  assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
  assert.deepEqual(asked, [busy.address], '10 s on: the busy lane\'s nonce, not the idle lane\'s');
  asked.length = 0;
  now += 2_000;
  assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
  assert.deepEqual(asked, [], 'not again before 10 s');
  now += 10 * 60_000;
  assert.equal(await sweep.rebroadcastStale('ethereum', 5_000), 0);
  assert.deepEqual(asked, [], 'nothing mined within 10 minutes: no lane read');
  assert.equal(await partsFor(busy, Date.now, { chains: counted(true), lanes: [busy, idle] }).recovery.rebroadcastStale('ethereum', 5_000), 0);
  assert.deepEqual(asked, [], 'a chain we run is rebuilt by its supervisor: nothing read');
});

test('a journaled transaction no node takes is sent again by `recover` and left journaled: counted pending, not finished', async () => {
  const account = devAccount(0);
  const { client } = parts.chains.ethereum;
  const { lines, logger: capturing } = capturingLogger();
  // The receipt wait is short here (500 ms) so the test stays fast: the transaction cannot be mined.
  const { sender, recovery } = partsFor(account, Date.now, { logger: capturing, receiptTimeoutMs: 500 });
  await sender.fees('ethereum', account.address);
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n },
    () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  assert.equal(await recovery.recover('ethereum'), 0);
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/, 'refused by the node');
  assert.deepEqual((await parts.journal.listUnmined('ethereum', account.address)).map((tx) => tx.txHash), [journaled.txHash], 'still journaled, for the next sweep');
  assert.deepEqual(lines.filter((line) => line.msg === 'recovered journaled transactions').map(({ pending, finished }) => ({ pending, finished })), [{ pending: 1, finished: 0 }]);
});

test('a sender waiting for its transaction while the stale sweep re-prices it is answered with the re-priced version\'s receipt once that is mined, not at the end of its wait', async () => {
  const account = await freshLane();
  let now = Date.now();
  const { sender, waiter, recovery } = partsFor(account, () => now);
  await sender.fees('ethereum', account.address);
  // Signed with a fee cap of 1 wei: no node takes it while the base fee is above that.
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n },
    () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  await sender.broadcast('ethereum', journaled.rawTx);
  // Its sender waits up to a minute, by the hash it signed (which can never be mined).
  const waiting = waiter.finish('ethereum', journaled.id, [journaled.txHash], 60_000);
  now += 60_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 1, 'the sweep saw the re-priced version mined');
  const [repriced] = await parts.journal.hashesOf(journaled.id);
  assert.ok(repriced !== undefined && repriced !== journaled.txHash, 'a re-priced version journaled');
  let timer: NodeJS.Timeout | undefined;
  const answer = await Promise.race([waiting, new Promise<'still waiting'>((resolve) => { timer = setTimeout(resolve, 20_000, 'still waiting'); })]);
  clearTimeout(timer);
  assert.ok(answer !== 'still waiting', 'answered within 20 s of the sweep, not after its minute');
  assert.equal(answer.status, 'confirmed');
  assert.equal(answer.txHash, repriced, 'the hash of the version mined');
  assert.equal(answer.receipt?.transactionHash, repriced);
  assert.equal(answer.receipt.status, 'success');
});

test('a transfer the chain lost whose authorization expired before it was sent again reverts: recovery records it failed and says so, naming the transaction, as an error', async () => {
  const lane = await freshLane();
  const holder = privateKeyToAccount(generatePrivateKey());
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const { client, chainId } = parts.chains.ethereum;
  const anvil = createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) });
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-recovery-'));
  const store = await openStore({ dataDir });
  try {
    const journal = createChainJournal(store.db, randomUUID);
    let now = Date.now();
    const { lines, logger: capturing } = capturingLogger();
    const { sender, waiter, recovery } = partsFor(lane, () => now, { journal, logger: capturing });
    const deploy = await sender.send('ethereum', {
      data: encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: ['VIXP Token', 'VIXP', holder.address, 1_000n] }), intent: { kind: 'deploy' },
    });
    const token = (await waiter.finish('ethereum', deploy.id, [deploy.txHash])).receipt?.contractAddress;
    assert.ok(token);
    const balanceOf = (address: Address) => client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address] });
    const validBefore = (await client.getBlock()).timestamp + 60n;
    const nonce = keccak256(stringToHex(`relayer-recovery.test:expired:${randomUUID()}`));
    const signature = await holder.signTypedData({
      domain: { name: 'VIXP Token', version: '1', chainId, verifyingContract: token }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
      message: { from: holder.address, to: payee, value: 250n, validAfter: 0n, validBefore, nonce },
    });
    const item: SettlementItem = { token, from: holder.address, to: payee, value: 250n, validBefore, nonce, signature };
    const snapshot = await client.request({ method: 'evm_snapshot' as never }) as unknown as Hex;
    const settlement: Address = '0x5e771e0000000000000000000000000000000001';
    const journaled = await sender.journal('ethereum', lane, { intent: { kind: 'settlement', contractAddress: settlement } },
      await sender.fees('ethereum', lane.address), () => encodeSettlement(settlement, [item]));
    if (journaled === 'released') throw new Error('not released: no authorizations');
    assert.equal(await recovery.recover('ethereum'), 1);
    assert.equal(await balanceOf(payee), 250n, 'executed, and answered done');
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 0, 'a sweep while the node still has it');
    // Lost, and the next blocks come after its validBefore.
    await client.request({ method: 'evm_revert' as never, params: [snapshot] as never });
    await anvil.setNextBlockTimestamp({ timestamp: validBefore + 1n });
    await anvil.mine({ blocks: 3 });
    lines.length = 0;
    now += 10_000;
    assert.equal(await recovery.rebroadcastStale('ethereum', 10 * 60_000), 1);
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'reverted', 'the same bytes, too late');
    assert.equal(await balanceOf(payee), 0n);
    assert.equal((await journal.listUnmined('ethereum', lane.address)).length, 0);
    const errors = lines.filter((line) => line.level === 50).map(({ msg, transactions }) => ({ msg, transactions }));
    assert.deepEqual(errors, [
      { msg: 'the chain lost transactions recorded as mined; sending them again', transactions: undefined },
      { msg: 'transactions the chain lost reverted when sent again: what they moved was answered done and is undone; reconcile their operations', transactions: [journaled.id] },
    ]);
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a settlement journaled with a holder\'s EIP-3009 authorization and never broadcast: `recover` sends it, the transfer executes, and the authorization is recorded used', async () => {
  const lane = await freshLane();
  const holder = privateKeyToAccount(generatePrivateKey());
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const { client, chainId } = parts.chains.ethereum;
  // The authorizations table and the journal in one store, as the platform keeps them.
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-recovery-'));
  const store = await openStore({ dataDir });
  try {
    const journal = createChainJournal(store.db, randomUUID);
    const authorizations = createAuthorizationRepository(store.db, 'process');
    const { sender, waiter, recovery } = partsFor(lane, Date.now, { journal });
    // The platform's token, its supply held by `holder`, deployed by the lane.
    const deploy = await sender.send('ethereum', {
      data: encodeDeployData({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: ['VIXP Token', 'VIXP', holder.address, 1_000n] }), intent: { kind: 'deploy' },
    });
    const token = (await waiter.finish('ethereum', deploy.id, [deploy.txHash])).receipt?.contractAddress;
    assert.ok(token);
    const balanceOf = (address: Address) => client.readContract({ address: token, abi: vixpTokenAbi, functionName: 'balanceOf', args: [address] });

    // A payment's authorization, reserved, then signed by its holder with a nonce of its own.
    const reference = `payment:${randomUUID()}`;
    const nonce = keccak256(stringToHex(`relayer-recovery.test:${reference}`));
    const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3_600);
    const reserved = await authorizations.reserve({
      nonce, network: 'ethereum', reference, contractAddress: token, fromAddress: holder.address, toAddress: payee, value: '250',
      validBefore: Number(validBefore), fromBlock: Number(await client.getBlockNumber()), createdAt: Date.now(), updatedAt: Date.now(),
    }, { balance: () => balanceOf(holder.address) });
    assert.equal(reserved, 'reserved');
    const signature = await holder.signTypedData({
      domain: { name: 'VIXP Token', version: '1', chainId, verifyingContract: token }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
      message: { from: holder.address, to: payee, value: 250n, validAfter: 0n, validBefore, nonce },
    });
    const item: SettlementItem = { token, from: holder.address, to: payee, value: 250n, validBefore, nonce, signature };

    // Journaled as the settlement batcher journals a batch (of one: the token's own transferWithAuthorization), then the process stopped.
    const settlement: Address = '0x5e771e0000000000000000000000000000000001';
    const journaled = await sender.journal('ethereum', lane, { intent: { kind: 'settlement', contractAddress: settlement }, authorizationNonces: [nonce] },
      await sender.fees('ethereum', lane.address), (included) => encodeSettlement(settlement, included.map(() => item)));
    if (journaled === 'released') throw new Error('not released: the authorization is reserved');
    const stateOf = async () => {
      const record = await authorizations.find(nonce);
      return { status: record?.status, txHash: record?.txHash };
    };
    assert.deepEqual(await stateOf(), { status: 'submitted', txHash: journaled.txHash });

    assert.equal(await recovery.recover('ethereum'), 1);
    assert.equal((await client.getTransactionReceipt({ hash: journaled.txHash })).status, 'success');
    assert.equal(await balanceOf(payee), 250n, 'the transfer executed');
    assert.deepEqual(await stateOf(), { status: 'used', txHash: journaled.txHash }, 'nobody else waits for it: recovery records it used');
    assert.equal(await authorizations.held({ network: 'ethereum', contractAddress: token, fromAddress: holder.address }), 0n, 'no funds held for it any more');
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('account transfers journaled in a batch and in a batch of one, never broadcast: `recover` sends both; the items the receipts executed are recorded used, the skipped one is submitted for the wallet\'s sweep, even one recorded used before', async () => {
  const lane = await freshLane();
  const [a, b, c] = [0, 1, 2].map(() => privateKeyToAccount(generatePrivateKey())) as [PrivateKeyAccount, PrivateKeyAccount, PrivateKeyAccount];
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  const { client, chainId } = parts.chains.ethereum;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-recovery-'));
  const store = await openStore({ dataDir });
  try {
    const journal = createChainJournal(store.db, randomUUID);
    const authorizations = createAuthorizationRepository(store.db, 'process');
    const { sender, waiter, recovery } = partsFor(lane, Date.now, { journal });
    const deploy = async (data: Hex) => {
      const sent = await sender.send('ethereum', { data, intent: { kind: 'deploy' } });
      const address = (await waiter.finish('ethereum', sent.id, [sent.txHash])).receipt?.contractAddress;
      assert.ok(address);
      return getAddress(address);
    };
    const accountCode = await deploy(encodeDeployData({ abi: vixpayAccountAbi, bytecode: vixpayAccountBytecode }));
    const accountSettlement = await deploy(encodeDeployData({ abi: vixpAccountSettlementAbi, bytecode: vixpAccountSettlementBytecode }));
    // A USDT-shaped token (no EIP-3009, `transfer` answers nothing), its supply the lane's.
    const usdt = await deploy(encodeDeployData({ abi: tetherLikeAbi, bytecode: tetherLikeBytecode, args: ['Tether USD', 'USDT', 1_000_000_000n] }));
    const balanceOf = (address: Address) => client.readContract({ address: usdt, abi: tetherLikeAbi, functionName: 'balanceOf', args: [address] });
    for (const holder of [a, b, c]) {
      const sent = await sender.send('ethereum', { to: usdt, data: encodeFunctionData({ abi: tetherLikeAbi, functionName: 'transfer', args: [holder.address, 10_000_000n] }), intent: { kind: 'test' } });
      assert.equal((await waiter.finish('ethereum', sent.id, [sent.txHash])).status, 'confirmed');
    }

    // Each account's transfer reserved with its dense nonce (0), then signed with its delegation, as the wallet does (authorize-account-transfer.ts).
    const validBefore = Math.floor(Date.now() / 1000) + 3_600;
    const itemOf = async (holder: PrivateKeyAccount, value: bigint, deadline = BigInt(validBefore - 1)): Promise<SettlementItem> => {
      const reserved = await authorizations.reserveAccountNonce({
        network: 'ethereum', reference: `transfer:${randomUUID()}`, contractAddress: usdt, fromAddress: holder.address, toAddress: payee, value: String(value),
        validBefore, fromBlock: Number(await client.getBlockNumber()), createdAt: Date.now(), updatedAt: Date.now(),
      }, { balance: () => balanceOf(holder.address) }, (previous) => accountNonce('ethereum', holder.address, previous));
      assert.ok(typeof reserved === 'object', String(reserved));
      const signed = await signAccountTransfer(holder, chainId, { token: usdt, to: payee, value, nonce: hexToBigInt(reserved.chainNonce as Hex), deadline });
      const delegation = await signDelegation(holder, chainId, accountCode, 0);
      return { token: usdt, from: holder.address, to: payee, value, validBefore: deadline, nonce: reserved.chainNonce as Hex, key: reserved.nonce, signature: signed.signature, account: { delegation } };
    };
    // b's signed deadline is past: the batch skips it (ItemSkipped), a's executes beside it.
    const batch = [await itemOf(a, 1_500_000n), await itemOf(b, 2_000_000n, 1n)];
    const alone = [await itemOf(c, 2_500_000n)];
    const journalOnly = async (items: SettlementItem[]) => {
      const byKey = new Map(items.map((item) => [item.key!, item]));
      const journaled = await sender.journal('ethereum', lane, { intent: { kind: 'settlement', contractAddress: accountSettlement }, authorizationNonces: [...byKey.keys()] },
        await sender.fees('ethereum', lane.address), (included) => accountBatchLayout.encode(accountSettlement, included.map((key) => byKey.get(key)!)));
      if (journaled === 'released') throw new Error('not released: the transfers are reserved');
      return journaled;
    };
    const [batchTx, aloneTx] = [await journalOnly(batch), await journalOnly(alone)];
    const statusOf = async (item: SettlementItem) => (await authorizations.find(item.key!))?.status;
    assert.deepEqual(await Promise.all([...batch, ...alone].map(statusOf)), ['submitted', 'submitted', 'submitted']);
    assert.deepEqual(await authorizations.listAccountTransfersMined('ethereum'), [], 'journaled, not mined: nothing for the sweep');
    // b recorded used with the batch, as a caller's late write from a version of the block the chain lost would.
    assert.equal(await authorizations.finish(batch[1]!.key!, 'used', { txHash: batchTx.txHash }, Date.now()), true);

    // The process stopped before broadcasting; the restart's recovery sends both from the journal.
    assert.equal(await recovery.recover('ethereum'), 2);
    const [batchReceipt, aloneReceipt] = await Promise.all([batchTx, aloneTx].map((tx) => client.getTransactionReceipt({ hash: tx.txHash as Hex })));
    assert.deepEqual([batchReceipt!.type, batchReceipt!.to, aloneReceipt!.type, aloneReceipt!.to], ['eip7702', accountSettlement.toLowerCase(), 'eip7702', c.address.toLowerCase()]);
    assert.deepEqual(await Promise.all([payee, a.address, b.address, c.address].map(balanceOf)), [4_000_000n, 8_500_000n, 10_000_000n, 7_500_000n], 'a and c moved once, b nothing');
    assert.deepEqual(await Promise.all([...batch, ...alone].map(statusOf)), ['used', 'submitted', 'used'], 'recorded from the receipts: a and c used, b not executed');
    assert.deepEqual((await authorizations.find(batch[0]!.key!))?.txHash, batchTx.txHash);
    assert.deepEqual((await authorizations.listAccountTransfersMined('ethereum')).map((record) => record.nonce), [batch[1]!.key], 'b is left for the wallet\'s sweep, at once');
    assert.equal(await recovery.recover('ethereum'), 0, 'nothing sent twice');
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
