import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LocalAccount } from 'viem';
import { createRelayerRecovery, type RelayerRecoveryDeps } from './relayer-recovery.ts';
import { createTransactionSender } from './transaction-sender.ts';
import { createReceiptWaiter } from './receipt-waiter.ts';
import type { NetworkName } from '#shared/networks.ts';
import { createLogger } from '#shared/logger.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';

// Recovery on a real anvil and SQLite journal: what a crash between journaling and broadcasting leaves.
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: false }); });
after(async () => { await parts?.close(); });

const logger = createLogger('silent');

function partsFor(account: LocalAccount, clock: () => number = Date.now, deps: Partial<RelayerRecoveryDeps> = {}) {
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock, logger });
  const waiter = createReceiptWaiter({ journal: parts.journal, chains: parts.chains, clock, logger, receiptTimeoutMs: 10_000 });
  const recovery = createRelayerRecovery({
    journal: parts.journal, chains: parts.chains, lanes: [account], clock, logger, sender, waiter,
    repricing: { afterMs: 30_000, maxFeePerGas: 500n * 10n ** 9n }, ...deps,
  });
  /** Journaled and never broadcast: the process stopped right after the journal's commit. */
  const journaledOnly = async () => {
    const fees = await sender.fees('ethereum', account.address);
    const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, fees, () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
    if (journaled === 'released') throw new Error('not released: no authorizations');
    return journaled;
  };
  return { sender, recovery, journaledOnly };
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

test('`rebroadcastStale` sends the journaled transactions older than the age given, not the younger ones', async () => {
  const account = devAccount(2);
  const { client } = parts.chains.ethereum;
  let now = Date.now();
  const { recovery, journaledOnly } = partsFor(account, () => now);
  const journaled = await journaledOnly();
  now += 1_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 0);
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
  const { sender, recovery } = partsFor(account, () => now, { onReprice: () => { repriced++; } });
  await sender.fees('ethereum', account.address);
  // Signed with a fee cap of 2 wei: no node takes it while the base fee is above that.
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, { maxFeePerGas: 1n, maxPriorityFeePerGas: 1n },
    () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  if (journaled === 'released') throw new Error('not released: no authorizations');
  await sender.broadcast('ethereum', journaled.rawTx);
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/, 'refused by the node');
  now += 60_000;
  assert.equal(await recovery.rebroadcastStale('ethereum', 5_000), 1);
  assert.equal(repriced, 1);
  const hashes = await parts.journal.hashesOf(journaled.id);
  assert.equal(hashes.length, 2, 'the re-priced version, then the one it superseded');
  assert.equal(hashes[1], journaled.txHash);
  const mined = await client.getTransaction({ hash: hashes[0] as `0x${string}` });
  assert.equal(mined.nonce, 0, 'the same nonce');
  assert.ok(mined.blockNumber !== null);
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
});
