import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseEventLogs, parseUnits, toHex, type Hex } from 'viem';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { call, startTestPlatform, type TestPlatform } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import { newUser } from './support/payment-calls.ts';

// A settlement transaction whose fee cap the chain's base fee overtook (fees rose after it was
// signed) can never be mined as it is: the stale sweep re-prices it (same nonce, higher fees), and
// the transfer it carries is settled once, by the version the chain mined. The anvil's mining is
// paused while the transaction is journaled and in its pool, and its base fee set above the fee cap
// for the next block: a block mined then leaves the transaction out, and so would every later one.
// REPRICE_AFTER_SECONDS is long, so only the base fee can trigger the re-pricing here; a short
// receipt wait makes the test fail quickly, not hang, without it.
let t: TestPlatform;
before(async () => {
  t = await startTestPlatform({ env: { REPRICE_AFTER_SECONDS: '600', RECEIPT_TIMEOUT_SECONDS: '30' } });
});
after(async () => { await t?.stop(); });

const network = () => t.platform.config.paymentNetwork;
const chain = () => t.platform.chains[network()];
const anvil = (method: string, params: unknown[] = []) => chain().client.request({ method: method as never, params: params as never });

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

const repriced = async () => (await t.platform.metrics.relayerRepriced.get()).values.find((v) => v.labels.network === network())?.value ?? 0;

test('a settlement transaction whose fee cap fell below the base fee is re-priced, mined once, and answered by the hash that carried it', async () => {
  const [payer, payee] = await Promise.all([newUser({ t }, '10'), newUser({ t })]);
  const { data: _data, ...request } = await prepareTransfer(t.app, payer, payee.address, '3');
  const db = t.platform.store.db;
  const repricedBefore = await repriced();

  await anvil('evm_setAutomine', [false]);
  let answer: Promise<any>;
  let original: { hash: Hex; nonce: number; from: string; maxFeePerGas: bigint };
  try {
    answer = call(t.app, '/token', 'transfer', request);
    original = await waitFor('the transfer\'s settlement transaction journaled and in the paused node\'s pool', async () => {
      const row = await db.selectFrom('authorizations').select('tx_hash')
        .where('from_address', '=', payer.address).where('status', '=', 'submitted').executeTakeFirst();
      if (!row?.tx_hash) return undefined;
      const tx = await chain().client.getTransaction({ hash: row.tx_hash as Hex }).catch(() => undefined);
      return tx && { hash: tx.hash, nonce: tx.nonce, from: tx.from, maxFeePerGas: tx.maxFeePerGas as bigint };
    });
    // The next block's base fee above the transaction's fee cap: it is left out of that block.
    await anvil('anvil_setNextBlockBaseFeePerGas', [toHex(original.maxFeePerGas * 4n)]);
    await anvil('evm_mine');
    // The block just mined, by its number (the client answers 'latest' with the head last pushed, which may be the one before).
    const head = await chain().client.getBlock({ blockNumber: await chain().client.getBlockNumber({ cacheTime: 0 }) });
    assert.ok((head.baseFeePerGas as bigint) > original.maxFeePerGas, 'the base fee is above the transaction\'s fee cap');
    assert.ok(!head.transactions.includes(original.hash), 'the underpriced transaction was not mined');
  } finally {
    await anvil('evm_setAutomine', [true]);
  }

  const result = await answer;
  assert.equal(result.resultCode, '200', JSON.stringify(result));
  const carrier = result.TransactionID as Hex;
  assert.notEqual(carrier, original.hash, 'answered with the re-priced transaction, which carried the transfer');

  // The re-priced version was mined, with the same nonce; the original never was.
  const receipt = await chain().client.getTransactionReceipt({ hash: carrier });
  assert.equal(receipt.status, 'success');
  const mined = await chain().client.getTransaction({ hash: carrier });
  assert.equal(mined.nonce, original.nonce);
  assert.equal(mined.from.toLowerCase(), original.from.toLowerCase());
  assert.ok((mined.maxFeePerGas as bigint) >= (original.maxFeePerGas * 9n) / 8n, 'the replacement bid at least 12.5% more');
  await assert.rejects(chain().client.getTransactionReceipt({ hash: original.hash }), 'the original version has no receipt');

  // Moved exactly once.
  const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })
    .filter((log) => log.args.from.toLowerCase() === payer.address.toLowerCase());
  assert.deepEqual(moved.map((log) => [log.args.to.toLowerCase(), log.args.value]), [[payee.address.toLowerCase(), parseUnits('3', 18)]]);
  const balance = async (address: string) => (await call(t.app, '/token', 'getBalance', { address })).resultData.balance;
  assert.equal(await balance(payer.address), '7');
  assert.equal(await balance(payee.address), '3');

  // The journal: one row for the nonce, confirmed at the hash mined, the superseded version kept.
  const rows = (await db.selectFrom('chain_txs').select(['id', 'relayer', 'tx_hash', 'status'])
    .where('nonce', '=', original.nonce).where('network', '=', network()).execute())
    .filter((row) => row.relayer.toLowerCase() === original.from.toLowerCase());
  assert.equal(rows.length, 1);
  assert.deepEqual({ txHash: rows[0]!.tx_hash, status: rows[0]!.status }, { txHash: carrier, status: 'confirmed' });
  const versions = await db.selectFrom('chain_tx_versions').select('tx_hash').where('chain_tx_id', '=', rows[0]!.id).execute();
  assert.ok(versions.some((v) => v.tx_hash === original.hash), 'the original version is kept beside it');
  const authorization = await db.selectFrom('authorizations').select(['status', 'tx_hash']).where('from_address', '=', payer.address).executeTakeFirstOrThrow();
  assert.deepEqual({ ...authorization }, { status: 'used', tx_hash: carrier });
  assert.ok(await repriced() > repricedBefore, 'the re-pricing is counted');

  // The status API answers the hash that carried it, asked by that hash or by the superseded one.
  for (const asked of [carrier, original.hash]) {
    const status = await call(t.app, '/token', 'getTransferStatus', { transactionId: asked });
    assert.equal(status.resultCode, '200', JSON.stringify(status));
    assert.equal(status.resultData.transactionId, carrier, `asked by ${asked === carrier ? 'the carrier' : 'the superseded hash'}`);
    assert.equal(status.resultData.status, 'confirmed');
  }

  // The same signed request again moves nothing.
  const replay = await call(t.app, '/token', 'transfer', request);
  assert.notEqual(replay.resultCode, '200', JSON.stringify(replay));
  assert.equal(await balance(payer.address), '7');
});

test('a transaction unmined REPRICE_AFTER_SECONDS after it was signed is re-priced even above the base fee, and the version mined is the one answered', async () => {
  const fast = await startTestPlatform({ env: { REPRICE_AFTER_SECONDS: '1', RECEIPT_TIMEOUT_SECONDS: '30' } });
  try {
    const node = fast.platform.chains[fast.platform.config.paymentNetwork].client;
    const [payer, payee] = await Promise.all([newUser({ t: fast }, '10'), newUser({ t: fast })]);
    const { data: _data, ...request } = await prepareTransfer(fast.app, payer, payee.address, '2');
    const db = fast.platform.store.db;
    await node.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    let answer: Promise<any>;
    let first: string;
    try {
      answer = call(fast.app, '/token', 'transfer', request);
      first = await waitFor('the settlement transaction journaled', async () => (await db.selectFrom('authorizations').select('tx_hash')
        .where('from_address', '=', payer.address).where('status', '=', 'submitted').executeTakeFirst())?.tx_hash ?? undefined);
      // Mining paused, fees unchanged: only its age gets it re-priced (the sweep looks at it from 5 s on).
      await waitFor('a re-priced version in the node\'s pool', async () => {
        const current = (await db.selectFrom('authorizations').select('tx_hash').where('from_address', '=', payer.address).executeTakeFirst())?.tx_hash;
        if (!current || current === first) return undefined;
        return (await node.getTransaction({ hash: current as Hex }).catch(() => undefined)) ? current : undefined;
      });
    } finally {
      await node.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    }
    await node.request({ method: 'evm_mine' as never, params: [] as never });
    const result = await answer;
    assert.equal(result.resultCode, '200', JSON.stringify(result));
    const carrier = result.TransactionID as Hex;
    assert.notEqual(carrier, first);
    const [row] = await db.selectFrom('chain_txs').select(['id', 'tx_hash', 'status']).where('tx_hash', '=', carrier).execute();
    assert.equal(row?.status, 'confirmed');
    const versions = await db.selectFrom('chain_tx_versions').select('tx_hash').where('chain_tx_id', '=', row!.id).execute();
    assert.ok(versions.some((v) => v.tx_hash === first), 'the first version is kept');
    for (const version of versions) await assert.rejects(node.getTransactionReceipt({ hash: version.tx_hash as Hex }), `${version.tx_hash} was not mined`);
    assert.equal((await call(fast.app, '/token', 'getBalance', { address: payee.address })).resultData.balance, '2', 'moved once');
  } finally {
    await fast.stop();
  }
});
