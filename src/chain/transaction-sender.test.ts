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
    (error: unknown) => error instanceof DomainError && error.code === 'chain.transaction_failed' && /^the transaction would revert \(.+\)$/.test(error.message));
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  const next = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  assert.equal((await parts.chains.ethereum.client.getTransaction({ hash: next.txHash })).nonce, 0);
});

test('a network that does not answer is `chain.unavailable`, and nothing is journaled', async () => {
  const account = devAccount(4);
  const unreachable = { ...parts.chains, optimism: { ...parts.chains.optimism, client: createUnreachableClient() } };
  const sender = createTransactionSender({ journal: parts.journal, chains: unreachable, platform: account, clock: Date.now, logger });
  await assert.rejects(sender.send('optimism', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } }),
    (error: unknown) => error instanceof DomainError && error.code === 'chain.unavailable' && /^network optimism does not answer \(.*ECONNREFUSED.*\)$/.test(error.message));
  assert.deepEqual(await parts.journal.listUnmined('optimism', account.address), []);
});

function createUnreachableClient() {
  return { ...parts.chains.optimism.client, getTransactionCount: () => Promise.reject(new Error('connect ECONNREFUSED')) } as typeof parts.chains.optimism.client;
}

/** The log lines of a sender, as an operator reads them (pino's JSON, one object a line). */
function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const destination = { write: (chunk: string) => { lines.push(JSON.parse(chunk) as Record<string, unknown>); return true; } } as unknown as NodeJS.WritableStream;
  return { lines, logger: createLogger('info', destination) };
}

test('`send` signs what it journals as documented: to the recipient, no value, gas 1.2× the estimate, fee cap twice the estimate, the estimated tip; the block schedule is told of the send', async () => {
  const account = devAccount(6);
  const recipient = devAccount(9).address;
  const { client, blocks } = parts.chains.ethereum;
  // The block schedule records each send (a spy over the real one): how it tells a node mining on demand.
  const sends: number[] = [];
  const chains = { ...parts.chains, ethereum: { ...parts.chains.ethereum, blocks: { ...blocks, sent: (at: number, expectedAt?: number) => { sends.push(at); return blocks.sent(at, expectedAt); } } } };
  const sender = createTransactionSender({ journal: parts.journal, chains, platform: account, clock: Date.now, logger });
  const estimate = await client.estimateFeesPerGas();
  const gas = await client.estimateGas({ account: account.address, to: recipient, data: '0x01' });
  const before = Date.now();
  const sent = await sender.send('ethereum', { to: recipient, data: '0x01', intent: { kind: 'test' } });
  const tx = await client.getTransaction({ hash: sent.txHash });
  assert.equal(tx.to?.toLowerCase(), recipient.toLowerCase());
  assert.equal(tx.value, 0n);
  assert.equal(tx.type, 'eip1559');
  assert.equal(tx.gas, (gas * 12n) / 10n);
  assert.equal(tx.maxFeePerGas, estimate.maxFeePerGas * 2n);
  assert.equal(tx.maxPriorityFeePerGas, estimate.maxPriorityFeePerGas);
  assert.equal(sends.length, 1);
  assert.ok(sends[0]! >= before && sends[0]! <= Date.now());
});

test('`send` with a value (a lane\'s funding) signs and moves exactly that wei', async () => {
  // An account of its own (no other test's nonces), given gas money on the anvil.
  const account = devAccount(20);
  const recipient = devAccount(21).address;
  const { client } = parts.chains.ethereum;
  await client.request({ method: 'anvil_setBalance' as never, params: [account.address, '0xde0b6b3a7640000'] as never });
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  const sent = await sender.send('ethereum', { to: recipient, data: '0x', value: 123_456_789n, intent: { kind: 'lane-funding' } });
  assert.equal((await client.getTransaction({ hash: sent.txHash })).value, 123_456_789n);
  assert.equal((await client.waitForTransactionReceipt({ hash: sent.txHash })).status, 'success');
  assert.equal(await client.getBalance({ address: recipient }), 123_456_789n);
});

test('an entry whose authorizations are none of them reserved is released: nothing journaled, no nonce taken', async () => {
  const account = devAccount(7);
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger });
  const fees = await sender.fees('ethereum', account.address);
  const call = () => ({ to: devAccount(9).address, data: '0x' as Hex, gas: 21_000n });
  assert.equal(await sender.journal('ethereum', account, { intent: { kind: 'test' }, authorizationNonces: [] }, fees, call), 'released');
  assert.deepEqual(await parts.journal.listUnmined('ethereum', account.address), []);
  const next = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, fees, call);
  assert.notEqual(next, 'released');
  assert.equal((await parts.journal.listUnmined('ethereum', account.address))[0]?.nonce, 0, 'the nonce the released entry did not take');
});

test('one sender, two lanes: each lane\'s nonce is read from the chain once per process, and again after `resyncNonce`', async () => {
  const [first, second] = [devAccount(0), devAccount(9)];
  const { client } = parts.chains.ethereum;
  const other = createWalletClient({ account: first, chain: foundry, transport: http(parts.anvil.url) });
  await client.waitForTransactionReceipt({ hash: await other.sendTransaction({ to: first.address, value: 1n }) });
  const reads: string[] = [];
  const counting = { ...client, getTransactionCount: (args: Parameters<typeof client.getTransactionCount>[0]) => { reads.push(args.address); return client.getTransactionCount(args); } } as typeof client;
  const chains = { ...parts.chains, ethereum: { ...parts.chains.ethereum, client: counting } };
  const sender = createTransactionSender({ journal: parts.journal, chains, platform: first, clock: Date.now, logger });
  const call = () => ({ to: devAccount(9).address, data: '0x' as Hex, gas: 21_000n });
  const journalFor = async (account: typeof first) => {
    const journaled = await sender.journal('ethereum', account, { intent: { kind: 'test' } }, await sender.fees('ethereum', account.address), call);
    if (journaled === 'released') throw new Error('not released: no authorizations');
    await sender.broadcast('ethereum', journaled.rawTx);
    return (await client.getTransaction({ hash: (await client.waitForTransactionReceipt({ hash: journaled.txHash })).transactionHash })).nonce;
  };
  assert.equal(await journalFor(first), 1, 'after the nonce another sender used');
  assert.equal(await journalFor(second), 0);
  assert.equal(await journalFor(first), 2);
  assert.deepEqual(reads, [first.address, second.address], 'one read per lane');
  // Another sender uses the lane's next nonce: read again when told to, the next one follows it.
  await client.waitForTransactionReceipt({ hash: await other.sendTransaction({ to: first.address, value: 1n }) });
  await sender.resyncNonce('ethereum', first.address);
  assert.equal(await journalFor(first), 4);
  assert.deepEqual(reads, [first.address, second.address, first.address]);
});

test('a broadcast the node refuses is logged as a warning without the signed bytes, and not thrown: the receipt wait decides', async () => {
  const account = devAccount(8);
  const { lines, logger: capturing } = capturingLogger();
  const sender = createTransactionSender({ journal: parts.journal, chains: parts.chains, platform: account, clock: Date.now, logger: capturing });
  const sent = await sender.send('ethereum', { to: devAccount(9).address, data: '0x', intent: { kind: 'test' } });
  await parts.chains.ethereum.client.waitForTransactionReceipt({ hash: sent.txHash });
  assert.equal(lines.length, 0);
  await sender.broadcast('ethereum', sent.rawTx);
  assert.equal(lines.length, 1);
  assert.equal(lines[0]?.msg, 'broadcast failed; waiting for a receipt anyway');
  assert.equal(lines[0]?.network, 'ethereum');
  assert.match(String(lines[0]?.reason), /\w/, 'the node\'s reason, summarized');
  assert.ok(!JSON.stringify(lines).includes(sent.rawTx.slice(2, 40)), 'no signed bytes in the log');
});
