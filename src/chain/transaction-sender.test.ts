import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { createTransactionSender } from './transaction-sender.ts';
import { createLogger } from '#shared/logger.ts';
import { DomainError } from '#shared/errors.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';

// The transaction sender on a real anvil, with the journal in a real SQLite store.
let parts: ChainParts;
before(async () => { parts = await startChainParts({ managed: false }); });
after(async () => { await parts?.close(); });

const logger = createLogger('silent');

test('the sender takes its nonces from the chain\'s pending nonce, then hands them out in order, one per transaction', async () => {
  const platform = devAccount(1);
  const { client } = parts.chains.ethereum;
  // Another sender used the account first: its nonce 0 is taken outside the journal.
  const other = createWalletClient({ account: platform, chain: foundry, transport: http(parts.anvil.url) });
  await client.waitForTransactionReceipt({ hash: await other.sendTransaction({ to: platform.address, value: 1n }) });
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform, clock: Date.now, logger });
  const first = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  const second = await sender.send('ethereum', { to: devAccount(9).address, data: '0x01', intent: { kind: 'test' } });
  const [a, b] = await Promise.all([first, second].map(({ txHash }) => client.waitForTransactionReceipt({ hash: txHash })));
  const nonces = await Promise.all([first, second].map(async ({ txHash }) => (await client.getTransaction({ hash: txHash })).nonce));
  assert.deepEqual(nonces, [1, 2]);
  assert.equal(a?.status, 'success');
  assert.equal(b?.status, 'success');
  // Both journaled, neither recorded mined yet (the receipt waiter records them).
  assert.deepEqual((await parts.journal.listUnmined('ethereum', platform.address)).map((tx) => tx.txHash), [first.txHash, second.txHash]);
});

test('a transaction is journaled before it is broadcast: journaled bytes the node has never seen, then the same bytes sent', async () => {
  const account = devAccount(2);
  const { client } = parts.chains.ethereum;
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  const fees = await sender.fees('ethereum', account.address);
  const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, fees, () => ({ to: devAccount(9).address, data: '0x', gas: 21_000n }));
  assert.notEqual(journaled, 'released');
  if (journaled === 'released') return;
  // Journaled, not sent: what a crash here leaves for recovery.
  const [unmined] = await parts.journal.listUnmined('ethereum', account.address);
  assert.equal(unmined?.txHash, journaled.txHash);
  assert.equal(unmined?.rawTx, journaled.rawTx);
  await assert.rejects(client.getTransaction({ hash: journaled.txHash }), /could not be found/);
  await sender.broadcast('ethereum', journaled.rawTx);
  const receipt = await client.waitForTransactionReceipt({ hash: journaled.txHash });
  assert.equal(receipt.transactionHash, journaled.txHash);
  assert.equal((await client.getTransaction({ hash: journaled.txHash })).nonce, unmined?.nonce);
  // Sent again (a recovery after a crash that came after the broadcast): the node keeps the one.
  await sender.broadcast('ethereum', journaled.rawTx as Hex);
  assert.equal(await client.getTransactionCount({ address: account.address }), 1);
});

test('`send` journals the signed bytes before the node sees them, and broadcasts those bytes', async () => {
  const account = devAccount(5);
  const { client } = parts.chains.ethereum;
  const seenAtJournal: string[] = [];
  const journal = {
    ...parts.journal,
    async journal(...args: Parameters<typeof parts.journal.journal>) {
      const journaled = await parts.journal.journal(...args);
      if (journaled !== 'released') {
        seenAtJournal.push(await client.getTransaction({ hash: journaled.txHash as Hex }).then(() => 'known to the node', () => 'unknown to the node'));
      }
      return journaled;
    },
  };
  const sender = createTransactionSender({ journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  const sent = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  assert.deepEqual(seenAtJournal, ['unknown to the node']);
  assert.equal((await client.waitForTransactionReceipt({ hash: sent.txHash })).transactionHash, sent.txHash);
  assert.equal((await parts.journal.listUnmined('ethereum', account.address))[0]?.rawTx, sent.rawTx);
});

test('a transaction the node says would revert is refused before anything is journaled, and its nonce stays free', async () => {
  const account = devAccount(3);
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  // A deployment whose constructor reverts (PUSH1 0, PUSH1 0, REVERT).
  await assert.rejects(sender.send('ethereum', { data: '0x60006000fd', intent: { kind: 'deploy' } }),
    (error: unknown) => error instanceof DomainError && error.code === 'chain.transaction_failed');
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  const next = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  assert.equal((await parts.chains.ethereum.client.getTransaction({ hash: next.txHash })).nonce, 0);
});

test('a network that does not answer is `chain.unavailable`, and nothing is journaled', async () => {
  const account = devAccount(4);
  const unreachable = { ...parts.chains, optimism: { ...parts.chains.optimism, client: createUnreachableClient() } };
  const sender = createTransactionSender({ journal: parts.journal, chains: unreachable, platform: account, clock: Date.now, logger });
  await assert.rejects(sender.send('optimism', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } }),
    (error: unknown) => error instanceof DomainError && error.code === 'chain.unavailable');
  assert.deepEqual(await parts.journal.listUnmined('optimism', account.address), []);
});

function createUnreachableClient() {
  return { ...parts.chains.optimism.client, getTransactionCount: () => Promise.reject(new Error('connect ECONNREFUSED')) } as typeof parts.chains.optimism.client;
}
