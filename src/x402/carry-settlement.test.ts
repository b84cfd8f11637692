import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { createTestClient, getAddress, http, serializeErc6492Signature, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { vixpName } from '../chain/platform-contracts.ts';
import { createRelayer } from '../chain/relayer.ts';
import { createChainClients, type ChainClients } from '../chain/chain-clients.ts';
import type { ChainEndpoint } from '../chain/chain-supervisor.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import { createLogger } from '#shared/logger.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { devAccount, type ChainParts } from '../../test/support/chain-parts.ts';
import { startX402Chain, type X402Chain } from '../../test/support/x402-chain.ts';
import { startRpcProxy, type RpcProxy } from '../../test/support/rpc-proxy.ts';
import { carrySettlement } from './carry-settlement.ts';
import type { X402Deps } from './x402-deps.ts';

// How an accepted x402 settlement is carried to the chain (docs/x402.md "Settle"): on a real anvil
// with VIXP and the settlement contract, the platform's relayer (journal, batches, receipts) and the
// real authorization, settlement, facilitator-key and settlement-token repositories on SQLite. What
// is asserted is what the payer, the payee and the settlement's row show: the money moved exactly,
// the reservation held or released, the row's status and reason, and what was never sent.

const payTo = getAddress(devAccount(3).address);
const network: NetworkName = 'ethereum';

let chain: X402Chain;
let parts: ChainParts;
let token: Address;
let deps: X402Deps;
let journal: X402Chain['journal'];
/** The platform's clock: Date.now unless a test sets one. */
let clockAt: number | undefined;
const lines: string[] = [];

const client = () => parts.chains[network].client;
const balanceOf = (address: Address) => chain.balanceOf(address);
const send = (functionName: 'transfer' | 'transferWithAuthorization', args: readonly unknown[]) => chain.send(functionName, args);
const payer = (balance?: bigint) => chain.payer(balance);
const testClient = () => createTestClient({ mode: 'anvil', transport: http(parts.anvil.url) });
const nowS = () => BigInt(Math.floor(Date.now() / 1000));

before(async () => {
  const logs = new PassThrough();
  logs.on('data', (chunk: Buffer) => lines.push(...chunk.toString().split('\n').filter(Boolean)));
  chain = await startX402Chain({ logger: createLogger('warn', logs), clock: () => clockAt ?? Date.now() });
  ({ parts, token, deps, journal } = chain);
  await deps.keys.insert({ id: 'key', name: 'shop', tid: null, ratePerSecond: 10, createdAt: 1, revokedAt: null, keyHash: 'h' });
});
after(async () => { await chain?.close(); });

interface Terms { value?: bigint; validAfter?: bigint; validBefore?: bigint; signer?: LocalAccount; wrap?: { factory: Address; data: Hex } }

/** `from`'s authorization, signed (by `signer`, `from` unless named), accepted as POST /x402/settle stores it. */
async function accepted(from: LocalAccount, terms: Terms = {}) {
  const authorization = {
    from: from.address, to: payTo, value: terms.value ?? 1000n, validAfter: terms.validAfter ?? 0n,
    validBefore: terms.validBefore ?? nowS() + 600n, nonce: `0x${randomBytes(32).toString('hex')}` as Hex,
  };
  let signature = await (terms.signer ?? from).signTypedData!({
    domain: { name: vixpName, version: '1', chainId: foundry.id, verifyingContract: token },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: authorization,
  });
  if (terms.wrap) signature = serializeErc6492Signature({ address: terms.wrap.factory, data: terms.wrap.data, signature });
  const id = authorizationKey(network, token, from.address, authorization.nonce);
  await deps.settlements.accept({
    id, nonce: authorization.nonce, network, payer: from.address, payTo, asset: token, amount: String(authorization.value),
    validBefore: String(authorization.validBefore), validAfter: String(authorization.validAfter), signature, keyId: 'key', createdAt: 1, updatedAt: 1,
  });
  const record = (await deps.settlements.find(id))!;
  return { record, authorization, signature };
}

const rowOf = async (record: X402SettlementRecord) => {
  const row = (await deps.settlements.find(record.id))!;
  return { status: row.status, errorReason: row.errorReason, txHash: row.txHash };
};
const reservationOf = (record: X402SettlementRecord) => deps.authorizations.find(record.id);

/** The warnings logged while `run` ran. */
async function warnings(run: () => Promise<unknown>): Promise<Array<Record<string, unknown>>> {
  const from = lines.length;
  await run();
  return lines.slice(from).map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('a payment due', () => {
  test('reserved on the payer, settled in a batch: the payee gets the exact amount, the reservation used with the transaction, the row settled', async () => {
    const from = await payer();
    const { record } = await accepted(from, { value: 1234n, validBefore: nowS() + 600n });
    const [payeeBefore, blockBefore] = [await balanceOf(payTo), await client().getBlockNumber()];
    clockAt = Date.now();
    const logged = await warnings(() => carrySettlement(deps, record).finally(() => { clockAt = undefined; }));
    const row = await rowOf(record);
    assert.equal(row.status, 'settled');
    assert.match(row.txHash ?? '', /^0x[0-9a-f]{64}$/);
    const receipt = await client().getTransactionReceipt({ hash: row.txHash as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(await balanceOf(payTo), payeeBefore + 1234n);
    assert.equal(await balanceOf(from.address), 10_000n - 1234n);
    const reservation = (await reservationOf(record))!;
    assert.deepEqual({ ...reservation, fromBlock: undefined, updatedAt: undefined }, {
      nonce: record.id, chainNonce: record.nonce, network, reference: `x402:${record.id}`, contractAddress: token, fromAddress: from.address, toAddress: payTo,
      value: '1234', validBefore: Number(record.validBefore), fromBlock: undefined, status: 'used', txHash: row.txHash, cancelTxHash: null,
      createdAt: reservation.createdAt, updatedAt: undefined,
    });
    assert.ok(reservation.fromBlock >= Number(blockBefore) && reservation.fromBlock < Number(receipt.blockNumber), 'a block at or before the signature\'s use');
    assert.deepEqual(logged, []);

    // Carried again (a sweep that read the row before it ended): the reservation has ended, nothing is sent.
    const payeeAfter = await balanceOf(payTo);
    assert.deepEqual(await warnings(() => carrySettlement(deps, record)), [], 'not even tried: no batch refused it');
    assert.equal(await balanceOf(payTo), payeeAfter);
    assert.equal((await rowOf(record)).txHash, row.txHash);
  });

  test('the reservation is made at the platform\'s clock: created and updated then', async () => {
    const from = await payer();
    const { record } = await accepted(from);
    clockAt = Date.now() - 5_000;
    const at = clockAt;
    await carrySettlement(deps, record).finally(() => { clockAt = undefined; });
    assert.equal((await rowOf(record)).status, 'settled');
    assert.equal((await reservationOf(record))!.createdAt, at);
  });

  test('a reservation that exists (a crash after it was made) is reused and sent, never reserved again', async () => {
    const from = await payer(1000n);
    const { record } = await accepted(from, { value: 1000n });
    const fromBlock = Number(await client().getBlockNumber());
    assert.equal(await deps.authorizations.reserve({
      nonce: record.id, chainNonce: record.nonce, network, reference: `x402:${record.id}`, contractAddress: token, fromAddress: from.address, toAddress: payTo,
      value: record.amount, validBefore: Number(record.validBefore), fromBlock, createdAt: 7, updatedAt: 7,
    }, { balance: () => balanceOf(from.address) }), 'reserved');
    // The balance is the reservation's exactly: reserving again would find it held and refuse.
    await carrySettlement(deps, record);
    assert.equal((await rowOf(record)).status, 'settled');
    assert.equal(await balanceOf(from.address), 0n);
    assert.deepEqual([(await reservationOf(record))!.createdAt, (await reservationOf(record))!.status], [7, 'used']);
  });

  test('a balance that no longer covers it, less what the payer\'s authorizations in flight hold: failed insufficient_funds, nothing sent', async () => {
    const poor = await payer(999n);
    const { record } = await accepted(poor, { value: 1000n });
    await carrySettlement(deps, record);
    assert.deepEqual(await rowOf(record), { status: 'failed', errorReason: 'insufficient_funds', txHash: null });
    assert.equal(await balanceOf(poor.address), 999n);

    // Two of 1,000 on a balance of 1,500, carried at once: one holds 1,000, the other finds 500 left.
    const from = await payer(1500n);
    const [a, b] = [await accepted(from), await accepted(from)];
    await Promise.all([carrySettlement(deps, a.record), carrySettlement(deps, b.record)]);
    const rows = [await rowOf(a.record), await rowOf(b.record)];
    assert.deepEqual(rows.map((r) => r.status).sort(), ['failed', 'settled']);
    assert.equal(rows.find((r) => r.status === 'failed')!.errorReason, 'insufficient_funds');
    assert.equal(await balanceOf(from.address), 500n);
  });
});

describe('not due yet, or too late', () => {
  test('validAfter not passed (due at validAfter + 1): held, nothing reserved; a second later, sent', async () => {
    const from = await payer();
    const at = nowS() - 100n;
    const { record } = await accepted(from, { validAfter: at, validBefore: nowS() + 600n });
    clockAt = Number(at) * 1000 + 999;
    await carrySettlement(deps, record).finally(() => { clockAt = undefined; });
    assert.deepEqual(await rowOf(record), { status: 'accepted', errorReason: null, txHash: null });
    assert.equal(await reservationOf(record), undefined);
    clockAt = Number(at + 1n) * 1000;
    await carrySettlement(deps, record).finally(() => { clockAt = undefined; });
    assert.equal((await rowOf(record)).status, 'settled');
  });

  test('a validAfter further ahead than the platform holds: failed valid_after; at the hold\'s bound, held', async () => {
    const from = await payer();
    const now = nowS();
    clockAt = Number(now) * 1000;
    try {
      const bound = await accepted(from, { validAfter: now + 600n, validBefore: now + 1200n });
      await carrySettlement(deps, bound.record);
      assert.deepEqual(await rowOf(bound.record), { status: 'accepted', errorReason: null, txHash: null }, 'the default hold, 600 s');
      const beyond = await accepted(from, { validAfter: now + 601n, validBefore: now + 1200n });
      await carrySettlement(deps, beyond.record);
      assert.deepEqual(await rowOf(beyond.record), { status: 'failed', errorReason: 'invalid_exact_evm_payload_authorization_valid_after', txHash: null });
      const shorter = { ...deps, maxHoldSeconds: 100n };
      const within = await accepted(from, { validAfter: now + 100n, validBefore: now + 1200n });
      await carrySettlement(shorter, within.record);
      assert.equal((await rowOf(within.record)).status, 'accepted');
      const past = await accepted(from, { validAfter: now + 101n, validBefore: now + 1200n });
      await carrySettlement(shorter, past.record);
      assert.equal((await rowOf(past.record)).errorReason, 'invalid_exact_evm_payload_authorization_valid_after');
      for (const r of [bound, beyond, within, past]) assert.equal(await reservationOf(r.record), undefined);
    } finally {
      clockAt = undefined;
    }
  });

  test('validBefore within a second of the clock: failed valid_before, nothing sent; two seconds ahead, it is sent (and, expired on chain, fails there)', async () => {
    const from = await payer();
    // The platform's clock 1,000 s behind the chain's: what it still sends, the chain refuses as expired.
    const behind = nowS() - 1000n;
    clockAt = Number(behind) * 1000;
    try {
      const late = await accepted(from, { validBefore: behind + 1n });
      await carrySettlement(deps, late.record);
      assert.deepEqual(await rowOf(late.record), { status: 'failed', errorReason: 'invalid_exact_evm_payload_authorization_valid_before', txHash: null });
      assert.equal(await reservationOf(late.record), undefined);
      const sent = await accepted(from, { validBefore: behind + 2n });
      await carrySettlement(deps, sent.record);
      const row = await rowOf(sent.record);
      assert.deepEqual([row.status, row.errorReason], ['failed', 'invalid_transaction_state'], 'mined without executing it, its nonce unused');
      assert.equal((await client().getTransactionReceipt({ hash: row.txHash as Hex })).status, 'reverted');
      assert.equal(await balanceOf(from.address), 10_000n);
    } finally {
      clockAt = undefined;
    }
  });
});

describe('mined without executing it', () => {
  test('its nonce used meanwhile by someone holding the signature: the row is left to the observation, not failed here', async () => {
    const from = await payer(2000n);
    const { record, authorization, signature } = await accepted(from);
    await send('transferWithAuthorization', [authorization.from, authorization.to, authorization.value, authorization.validAfter, authorization.validBefore, authorization.nonce, signature]);
    await carrySettlement(deps, record);
    assert.deepEqual(await rowOf(record), { status: 'accepted', errorReason: null, txHash: null });
    assert.equal(await balanceOf(from.address), 1000n, 'moved once');
  });

  test('a signature that is not the payer\'s: sent alone, reverted, its nonce unused: failed invalid_transaction_state with the transaction', async () => {
    const from = await payer();
    const { record } = await accepted(from, { signer: privateKeyToAccount(generatePrivateKey()) });
    await carrySettlement(deps, record);
    const row = await rowOf(record);
    assert.deepEqual([row.status, row.errorReason], ['failed', 'invalid_transaction_state']);
    assert.equal((await client().getTransactionReceipt({ hash: row.txHash as Hex })).status, 'reverted');
  });
});

describe('a stored row that does not parse', () => {
  const broken: Array<[string, Partial<X402SettlementRecord>]> = [
    ['an amount in exponent form', { amount: '1e3' }], ['a signed amount', { amount: '-1' }], ['a validBefore that is no number', { validBefore: 'soon' }],
    ['a validAfter with a leading zero', { validAfter: '01' }], ['an unknown network', { network: 'nowhere' }],
    ['a nonce in upper case', { nonce: `0x${'AB'.repeat(32)}` }], ['a short nonce', { nonce: `0x${'ab'.repeat(31)}` }], ['a nonce with junk after', { nonce: `0x${'ab'.repeat(32)}00` }],
    ['a nonce with junk before', { nonce: ` 0x${'ab'.repeat(32)}` }],
    ['a payer that is no address', { payer: '0x1234' }], ['an asset that is no address', { asset: 'token' }], ['a payee that is no address', { payTo: `0x${'1'.repeat(41)}` }],
    ['an empty signature', { signature: '0x' }], ['an odd-length signature', { signature: '0xabc' }], ['a signature that is not hex', { signature: '0xzz' }],
    ['a signature with junk before', { signature: ' 0xab' }], ['a signature with junk after', { signature: '0xab ' }],
  ];
  for (const [what, change] of broken) {
    test(`${what}: never sent; failed invalid_transaction_state when nothing was reserved for it`, async () => {
      const { record } = await accepted(privateKeyToAccount(generatePrivateKey()));
      const changed = { ...record, ...change };
      await assert.rejects(carrySettlement(deps, changed), { message: `x402 settlement ${changed.nonce}: its stored row is not a settlement that can be sent` });
      assert.deepEqual(await rowOf(record), { status: 'failed', errorReason: 'invalid_transaction_state', txHash: null });
      assert.equal(await reservationOf(record), undefined);
    });
  }

  test('one reserved already: never sent, and left (to the log) rather than failed: its reservation may be in flight', async () => {
    const from = await payer();
    const { record } = await accepted(from);
    assert.equal(await deps.authorizations.reserve({
      nonce: record.id, chainNonce: record.nonce, network, reference: `x402:${record.id}`, contractAddress: token, fromAddress: from.address, toAddress: payTo,
      value: record.amount, validBefore: Number(record.validBefore), fromBlock: 1, createdAt: 1, updatedAt: 1,
    }, { balance: () => balanceOf(from.address) }), 'reserved');
    await assert.rejects(carrySettlement(deps, { ...record, amount: '1.5' }), /its stored row is not a settlement that can be sent/);
    assert.equal((await rowOf(record)).status, 'accepted');
    assert.equal((await reservationOf(record))!.status, 'reserved');
  });
});

describe('an ERC-6492 payer (a wallet not deployed yet)', () => {
  const factory = getAddress(`0x${'fa'.repeat(20)}`);

  test('its factory not one the platform deploys with: the reservation released, failed eip6492_factory_not_allowed, nothing sent', async () => {
    const from = await payer();
    const { record } = await accepted(from, { wrap: { factory, data: '0x1234' } });
    await carrySettlement(deps, record);
    assert.deepEqual(await rowOf(record), { status: 'failed', errorReason: 'eip6492_factory_not_allowed', txHash: null });
    assert.equal(await reservationOf(record), undefined, 'released');
    assert.equal(await balanceOf(from.address), 10_000n);
  });

  test('its deployment journaled and not mined yet: the transfer waits (reserved, the row accepted), nothing sent', async () => {
    const from = await payer();
    const { record } = await accepted(from, { wrap: { factory, data: '0x1234' } });
    // The platform's deployment of that wallet, signed and broadcast but not mined (mining paused; a short wait).
    const quick = createRelayer({ journal, chains: parts.chains, lanes: [devAccount(6)], clock: Date.now, logger: createLogger('silent'), receiptTimeoutMs: 200 });
    await testClient().setAutomine(false);
    try {
      const sent = await quick.submit(network, { to: payTo, data: '0x', intent: { kind: 'wallet-deploy', reference: `x402-wallet:${record.payer}`, contractAddress: factory, toAddress: record.payer } });
      assert.equal(sent.status, 'signed');
    } finally {
      await testClient().setAutomine(true);
    }
    const walletDeps = { ...deps, walletDeployments: { factories: [factory], journal } };
    await carrySettlement(walletDeps, record);
    assert.deepEqual(await rowOf(record), { status: 'accepted', errorReason: null, txHash: null });
    assert.equal((await reservationOf(record))!.status, 'reserved');
    assert.equal(await balanceOf(from.address), 10_000n);
  });
});

describe('a relayer that cannot send it now', () => {
  let proxy: RpcProxy;
  let proxied: ChainClients;
  before(async () => {
    // The relayer's node lacks what it needs to sign (the lane's nonce): nothing is journaled, nothing sent.
    proxy = await startRpcProxy(parts.anvil.url, { lacking: ['eth_getTransactionCount'] });
    const endpoints = Object.fromEntries(networkNames.map((n) => [n, { network: n, url: proxy.url, managed: false }])) as Record<NetworkName, ChainEndpoint>;
    proxied = await createChainClients(endpoints, 20, {}, undefined, 1_000);
  });
  after(async () => {
    for (const n of networkNames) proxied?.[n].receipts.close();
    await proxy?.close();
  });

  test('left accepted and reserved, a warning naming it; the sweep\'s next carry sends it', async () => {
    const from = await payer();
    const { record } = await accepted(from, { value: 700n });
    const down = { ...deps, relayer: createRelayer({ journal, chains: proxied, lanes: [devAccount(7)], clock: Date.now, logger: createLogger('silent'), batch: { windowMs: 10, maxItems: 10 } }) };
    const logged = await warnings(() => carrySettlement(down, record));
    assert.deepEqual(await rowOf(record), { status: 'accepted', errorReason: null, txHash: null });
    assert.equal((await reservationOf(record))!.status, 'reserved');
    assert.equal(logged.length, 1);
    assert.equal(logged[0]!.msg, 'x402 settlement not sent yet; retried by the sweep');
    assert.deepEqual([logged[0]!.network, logged[0]!.nonce], [network, record.nonce]);
    assert.match(String(logged[0]!.reason), /does not answer/);
    await carrySettlement(deps, record);
    assert.equal((await rowOf(record)).status, 'settled');
    assert.equal(await balanceOf(from.address), 10_000n - 700n);
  });
});
