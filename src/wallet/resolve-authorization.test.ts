import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createPublicClient, createWalletClient, http, toHex, type Address, type Hex } from 'viem';
import { foundry } from 'viem/chains';
import { DomainError } from '#shared/errors.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { vixpName } from '../chain/platform-contracts.ts';
import type { AuthorizationRepository, AuthorizationRecord } from '../store/authorization-repository.ts';
import {
  network, openTransferParts, startFlakyNode, vixp, type CustodialWallet, type FlakyNode, type TransferParts,
} from '../../test/support/transfer-parts.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { transferAuthorizationTypes } from './authorize-transfer.ts';
import { resolveAuthorization, sweepExpiredAuthorizations } from './resolve-authorization.ts';

// How an authorization whose transfer did not confirm is settled (and the expiry sweep that settles
// those left open), on a real anvil with VIXP, the real relayer and a real SQLite store: the chain's
// nonce state and events decide, the holder's cancellation is sent and mined, the row records it.

let parts: TransferParts;
let flaky: FlakyNode;
before(async () => {
  parts = await openTransferParts();
  flaky = await startFlakyNode(parts.anvil.url);
});
after(async () => {
  await flaky?.close();
  await parts?.dispose();
});

const nowS = () => Math.floor(Date.now() / 1000);
/** The node's own head: the platform's client answers 'latest' from the pushed head, which can be a block or two behind. */
const head = async () => createPublicClient({ transport: http(parts.anvil.url) }).getBlock({ blockTag: 'latest' });
/**
 * The block after the one that mined `hash`, read from its receipt: 'latest' may be answered from the
 * pushed head, which can be the block before (docs/decisions/node-providers.md).
 */
const blockAfter = async (hash: Hex) => Number((await parts.chains[network].client.getTransactionReceipt({ hash })).blockNumber) + 1;

interface Reserved { nonce: Hex; chainNonce: Hex; holder: CustodialWallet; to: Address; value: bigint; validBefore: number }

/** A reservation of `holder`'s as authorizeTransfer makes one (a nonce of its own), `status` as the journal would leave it. */
async function reserved(options: { holder?: CustodialWallet; validBefore?: number; status?: 'reserved' | 'submitted'; key?: string; fromBlock?: number } = {}): Promise<Reserved> {
  const holder = options.holder ?? await parts.newWallet('10');
  const to = (await parts.newWallet('0')).address;
  const chainNonce = toHex(randomBytes(32));
  // An outside payer's key is not hex: resolveAuthorization is handed it as the row's key all the same.
  const nonce = (options.key ?? chainNonce) as Hex;
  const validBefore = options.validBefore ?? nowS() + 600;
  const value = vixp('1');
  const record: Omit<AuthorizationRecord, 'status' | 'txHash' | 'cancelTxHash'> = {
    nonce, network, reference: `test:${nonce}`, contractAddress: parts.token, fromAddress: holder.address, toAddress: to, value: value.toString(),
    validBefore, fromBlock: options.fromBlock ?? Number((await head()).number), createdAt: Date.now(), updatedAt: Date.now(),
    ...(options.key !== undefined && { chainNonce }),
  };
  assert.equal(await parts.deps.authorizations.reserve(record, { balance: async () => vixp('1000') }), 'reserved');
  if (options.status === 'submitted') await parts.store.db.updateTable('authorizations').set({ status: 'submitted' }).where('nonce', '=', nonce).execute();
  return { nonce, chainNonce, holder, to, value, validBefore };
}

const treasuryWallet = () => createWalletClient({ account: parts.treasury, chain: foundry, transport: http(parts.anvil.url) });
const domain = () => ({ name: vixpName, version: '1', chainId: foundry.id, verifyingContract: parts.token });

/** The holder's authorization, re-sent by someone else (the treasury): executed on chain. */
async function executeElsewhere(r: Reserved): Promise<Hex> {
  const signature = await r.holder.account.signTypedData({
    domain: domain(), types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
    message: { from: r.holder.address, to: r.to, value: r.value, validAfter: 0n, validBefore: BigInt(r.validBefore), nonce: r.chainNonce },
  });
  const hash = await treasuryWallet().writeContract({
    address: parts.token, abi: vixpTokenAbi, functionName: 'transferWithAuthorization',
    args: [r.holder.address, r.to, r.value, 0n, BigInt(r.validBefore), r.chainNonce, signature],
  } as never);
  assert.equal((await parts.chains[network].client.waitForTransactionReceipt({ hash })).status, 'success');
  return hash;
}

/** The holder cancels it on chain itself (the treasury carries the signed cancellation). */
async function cancelElsewhere(r: Reserved): Promise<Hex> {
  const signature = await r.holder.account.signTypedData({
    domain: domain(), types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
    primaryType: 'CancelAuthorization', message: { authorizer: r.holder.address, nonce: r.chainNonce },
  });
  const hash = await treasuryWallet().writeContract({
    address: parts.token, abi: vixpTokenAbi, functionName: 'cancelAuthorization', args: [r.holder.address, r.chainNonce, signature],
  } as never);
  assert.equal((await parts.chains[network].client.waitForTransactionReceipt({ hash })).status, 'success');
  return hash;
}

const onChain = (r: Reserved) => parts.chains[network].client.readContract({ address: parts.token, abi: vixpTokenAbi, functionName: 'authorizationState', args: [r.holder.address, r.chainNonce] });
const withClock = (clock: () => number, deps: WalletDeps = parts.deps): WalletDeps => ({ ...deps, clock });

describe('sweepExpiredAuthorizations', () => {
  test('ends each open authorization past its validity as the chain shows it (used or expired) and counts them; one still valid is left open', async () => {
    const used = await reserved({ validBefore: nowS() + 60 });
    const usedTx = await executeElsewhere(used);
    const unused = await reserved({ validBefore: nowS() + 60, status: 'submitted' });
    const valid = await reserved({ validBefore: nowS() + 7_200 });
    // Used before the block its search starts from: the chain cannot say how yet; left open, not counted.
    // Executed and still valid: not past its validity, so not the sweep's (its transfer's own resolution records it).
    const validUsed = await reserved({ validBefore: nowS() + 7_200 });
    await executeElsewhere(validUsed);
    const unseen = await reserved({ validBefore: nowS() + 60 });
    const unseenTx = await executeElsewhere(unseen);
    await parts.store.db.updateTable('authorizations').set({ from_block: await blockAfter(unseenTx) }).where('nonce', '=', unseen.nonce).execute();
    const inAnHour = () => Date.now() + 3_600_000;
    assert.equal(await sweepExpiredAuthorizations(withClock(inAnHour), network), 2);
    assert.deepEqual(await parts.authorization(used.nonce), { status: 'used', txHash: usedTx, cancelTxHash: null });
    assert.equal((await parts.authorization(unused.nonce))?.status, 'expired');
    assert.equal((await parts.authorization(valid.nonce))?.status, 'reserved');
    assert.equal((await parts.authorization(validUsed.nonce))?.status, 'reserved');
    assert.equal((await parts.authorization(unseen.nonce))?.status, 'reserved');
    assert.equal(await sweepExpiredAuthorizations(withClock(Date.now), network), 0, 'nothing past its validity now');
  });
});

describe('resolveAuthorization', () => {
  test('no authorization: void; one already ended is answered as stored, without asking the chain', async () => {
    const down: WalletDeps = { ...parts.deps, chains: { ...parts.chains, [network]: flaky.chainClient(parts.chains[network]) } };
    flaky.down.add('eth_call');
    try {
      assert.deepEqual(await resolveAuthorization(down, network, toHex(randomBytes(32))), { status: 'void' });
      for (const status of ['used', 'canceled', 'expired', 'void'] as const) {
        const r = await reserved();
        const txHash = `0x${'ab'.repeat(32)}`;
        await parts.deps.authorizations.finish(r.nonce, status, { txHash }, Date.now());
        assert.deepEqual(await resolveAuthorization(down, network, r.nonce), status === 'used' ? { status, txHash } : { status });
      }
    } finally {
      flaky.down.clear();
    }
  });

  test('used on chain (by anyone re-sending it): used, with the transaction that executed it, recorded', async () => {
    const r = await reserved();
    // Another authorization executed after this one was signed and before it: not this one's transaction.
    await executeElsewhere(await reserved());
    const tx = await executeElsewhere(r);
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'used', txHash: tx });
    assert.deepEqual(await parts.authorization(r.nonce), { status: 'used', txHash: tx, cancelTxHash: null });
    assert.equal(await parts.balanceOf(r.to), r.value);
  });

  test('an outside payer\'s row (its key is not the nonce on chain): the chain is asked by its nonce, the row ended by its key', async () => {
    const r = await reserved({ key: `${network}:outside:${randomBytes(8).toString('hex')}` });
    const tx = await executeElsewhere(r);
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'used', txHash: tx });
    assert.equal((await parts.authorization(r.nonce))?.status, 'used');
    const c = await reserved({ key: `${network}:outside:${randomBytes(8).toString('hex')}`, validBefore: nowS() - 1 });
    assert.deepEqual(await resolveAuthorization(parts.deps, network, c.nonce), { status: 'expired' });
    assert.equal((await parts.authorization(c.nonce))?.status, 'expired');
  });

  test('cancelled on chain by its holder: canceled, with the cancellation recorded', async () => {
    const r = await reserved({ status: 'submitted' });
    await cancelElsewhere(await reserved());
    const tx = await cancelElsewhere(r);
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'canceled' });
    assert.deepEqual(await parts.authorization(r.nonce), { status: 'canceled', txHash: null, cancelTxHash: tx });
  });

  test('reserved, still valid and not on chain: open, and nothing is sent (only this process could still send it)', async () => {
    const r = await reserved();
    const block = (await head()).number;
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'open' });
    assert.equal((await parts.authorization(r.nonce))?.status, 'reserved');
    assert.equal(await onChain(r), false);
    assert.equal((await head()).number, block, 'no transaction');
  });

  test('past its validity by the chain\'s time or the wall clock less a minute: expired, recorded; a second before: open', async () => {
    // Their holders funded first: no block is mined from reading the head to resolving.
    const [one, two, three] = [await parts.newWallet('10'), await parts.newWallet('10'), await parts.newWallet('10')];
    const latest = await head();
    const atHead = await reserved({ holder: one, validBefore: Number(latest.timestamp) });
    const past = () => 0;
    assert.deepEqual(await resolveAuthorization(withClock(past), network, atHead.nonce), { status: 'expired' });
    assert.equal((await parts.authorization(atHead.nonce))?.status, 'expired');
    const afterHead = await reserved({ holder: two, validBefore: Number(latest.timestamp) + 1 });
    assert.equal((await head()).timestamp, latest.timestamp, 'no block since');
    assert.deepEqual(await resolveAuthorization(withClock(past), network, afterHead.nonce), { status: 'open' });

    const validBefore = nowS() + 3_600;
    const byClock = await reserved({ holder: three, validBefore });
    assert.deepEqual(await resolveAuthorization(withClock(() => (validBefore + 59) * 1000 + 999), network, byClock.nonce), { status: 'open' }, 'within the drift');
    assert.deepEqual(await resolveAuthorization(withClock(() => (validBefore + 60) * 1000), network, byClock.nonce), { status: 'expired' });
    assert.equal((await parts.authorization(byClock.nonce))?.status, 'expired');
  });

  test('sent and neither executed nor expired: its holder cancels it through the relayer; canceled, recorded, and nothing can execute it', async () => {
    const r = await reserved({ status: 'submitted' });
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'canceled' });
    const record = await parts.authorization(r.nonce);
    assert.equal(record?.status, 'canceled');
    const receipt = await parts.chains[network].client.getTransactionReceipt({ hash: record!.cancelTxHash as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(receipt.from.toLowerCase(), parts.relayer.address.toLowerCase(), 'the relayer pays for it');
    const journaled = await parts.store.db.selectFrom('chain_txs').select(['kind', 'reference']).where('tx_hash', '=', record!.cancelTxHash!).executeTakeFirstOrThrow();
    assert.deepEqual({ ...journaled }, { kind: 'cancel-authorization', reference: `test:${r.nonce}` }, 'journaled as the cancellation of its operation');
    assert.equal(await onChain(r), true, 'its nonce is spent');
    await assert.rejects(executeElsewhere(r));
    assert.equal(await parts.balanceOf(r.to), 0n);
  });

  test('the node cannot serve logs: a cancellation the relayer saw mined is enough', async () => {
    const r = await reserved({ status: 'submitted' });
    const noLogs: WalletDeps = { ...parts.deps, chains: { ...parts.chains, [network]: flaky.chainClient(parts.chains[network]) } };
    flaky.down.add('eth_getLogs');
    try {
      assert.deepEqual(await resolveAuthorization(noLogs, network, r.nonce), { status: 'canceled' });
    } finally {
      flaky.down.clear();
    }
    assert.equal((await parts.authorization(r.nonce))?.status, 'canceled');
    assert.equal(await onChain(r), true);
  });

  test('a row keyed apart from its nonce on chain, of an account the platform holds: the cancellation is signed for the nonce on chain', async () => {
    const r = await reserved({ key: `${network}:outside:${randomBytes(8).toString('hex')}`, status: 'submitted' });
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'canceled' });
    assert.equal((await parts.authorization(r.nonce))?.status, 'canceled');
    assert.equal(await onChain(r), true);
  });

  test('sent from an address the platform holds no account for: open (nobody here can sign its cancellation)', async () => {
    const stranger = { ...(await parts.newWallet('0')) };
    await parts.store.db.deleteFrom('accounts').where('address', '=', stranger.address).execute();
    const r = await reserved({ holder: stranger, status: 'submitted' });
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'open' });
    assert.equal(await onChain(r), false);
  });

  test('a cancellation the node refuses (the nonce was used where the search does not look): open, nothing recorded', async () => {
    const r = await reserved({ status: 'submitted' });
    const elsewhere = await executeElsewhere(r);
    await parts.store.db.updateTable('authorizations').set({ from_block: await blockAfter(elsewhere) }).where('nonce', '=', r.nonce).execute();
    assert.deepEqual(await resolveAuthorization(parts.deps, network, r.nonce), { status: 'open' });
    assert.deepEqual(await parts.authorization(r.nonce), { status: 'submitted', txHash: null, cancelTxHash: null });
  });

  test('a node that does not answer: open, the row left as it is', async () => {
    const r = await reserved();
    const down: WalletDeps = { ...parts.deps, chains: { ...parts.chains, [network]: flaky.chainClient(parts.chains[network]) } };
    for (const method of ['eth_call', 'eth_getBlockByNumber', 'eth_getLogs']) {
      flaky.down.clear();
      flaky.down.add(method);
      assert.deepEqual(await resolveAuthorization(withClock(() => 0, down), network, r.nonce), { status: 'open' }, method);
      assert.equal((await parts.authorization(r.nonce))?.status, 'reserved', method);
    }
    flaky.down.clear();
    await executeElsewhere(r);
    flaky.down.add('eth_getLogs');
    try {
      assert.deepEqual(await resolveAuthorization(down, network, r.nonce), { status: 'open' }, 'used, and its event cannot be read');
    } finally {
      flaky.down.clear();
    }
  });

  test('a disk too full to record the chain\'s answer: the answer stands (used, canceled, expired), the row waits for a later sweep', async () => {
    const real = parts.deps.authorizations;
    const authorizations: AuthorizationRepository = { ...real, finish: async () => { throw new DomainError('store.full', 'the disk is full'); } };
    const full: WalletDeps = { ...parts.deps, authorizations };
    const used = await reserved();
    const tx = await executeElsewhere(used);
    assert.deepEqual(await resolveAuthorization(full, network, used.nonce), { status: 'used', txHash: tx });
    const canceled = await reserved();
    await cancelElsewhere(canceled);
    assert.deepEqual(await resolveAuthorization(full, network, canceled.nonce), { status: 'canceled' });
    const expired = await reserved({ validBefore: nowS() - 120 });
    assert.deepEqual(await resolveAuthorization(full, network, expired.nonce), { status: 'expired' });
    for (const r of [used, canceled, expired]) assert.equal((await parts.authorization(r.nonce))?.status, 'reserved');
    // Sent, then cancelled through the relayer: the chain's answer stands too.
    const sent = await reserved({ status: 'submitted' });
    assert.deepEqual(await resolveAuthorization(full, network, sent.nonce), { status: 'canceled' });
    assert.equal(await onChain(sent), true);
  });
});
