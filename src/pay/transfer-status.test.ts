import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import type { AuthorizationStatus, ChainTxStatus } from '../store/schema.ts';
import { openPayParts, payNetwork, randomHash, vixpContract, type PayParts } from '../../test/support/pay-parts.ts';
import { getTransferStatus, transferStatusOf, type TransferStatusDeps } from './transfer-status.ts';

// What a client that got 202, a 502 or no answer at all learns of its transfer from the token API's
// getTransferStatus: pending, confirmed (only while the node has the receipt) or failed with 502.
// Real SQLite store and transfer-status repository; `receiptIsFinal` answers as the node would.

describe('getTransferStatus', () => {
  let parts: PayParts;
  let deps: TransferStatusDeps;
  /** The transactions the node has a final receipt of. */
  const final = new Set<string>();
  const asked: string[] = [];
  before(async () => {
    parts = await openPayParts();
    deps = { transfers: parts.transfers, receiptIsFinal: async (_network, txHash) => { asked.push(txHash); return final.has(txHash); } };
    await parts.store.db.insertInto('tokens').values({
      network: payNetwork, contract_address: vixpContract, symbol: 'VIXP', name: 'VIXP', decimals: 6, owner: vixpContract, created_at: 0,
    }).execute();
  });
  after(async () => { await parts.dispose(); });

  /** The records' creation order, so a transaction's transfers come back in it. */
  let recorded = 0;
  const holder = () => `0x${randomBytes(20).toString('hex')}`;
  /** A transfer's authorization as the wallet records it. */
  async function transfer(o: { status: AuthorizationStatus; from?: string; txHash?: string | null; reference?: string; contract?: string; value?: string }) {
    const record = {
      nonce: randomHash(), network: payNetwork, reference: o.reference ?? `transfer:${randomBytes(4).toString('hex')}`, contract_address: o.contract ?? vixpContract,
      from_address: o.from ?? holder(), to_address: holder(), value: o.value ?? '2500000', valid_before: 1, from_block: 0, status: o.status,
      tx_hash: o.txHash === undefined ? randomHash() : o.txHash, cancel_tx_hash: null, created_at: ++recorded, updated_at: 1, chain_nonce: null,
    };
    await parts.store.db.insertInto('authorizations').values(record).execute();
    return record;
  }
  async function relayed(kind: string, status: ChainTxStatus) {
    const txHash = randomHash();
    await parts.store.db.insertInto('chain_txs').values({
      id: randomBytes(8).toString('hex'), network: payNetwork, kind, reference: null, relayer: holder(), nonce: 0, raw_tx: '0x', tx_hash: txHash,
      from_address: null, to_address: null, contract_address: null, amount: null, status, block_number: null, block_timestamp: null, tx_index: null,
      gas_used: null, fee_wei: null, error: null, created_at: 1, updated_at: 1,
    }).execute();
    return txHash;
  }
  const refusalOf = async (promise: Promise<unknown>) => {
    try { await promise; } catch (error) { if (error instanceof DomainError) return { code: error.code, message: error.message, details: error.details }; throw error; }
    return undefined;
  };

  test('a transfer executed on chain, with a final receipt: confirmed, with its fields in the token\'s units', async () => {
    const t = await transfer({ status: 'used' });
    final.add(t.tx_hash!);
    assert.deepEqual(await getTransferStatus(deps, payNetwork, t.tx_hash!.toUpperCase().replace('0X', '0x')), {
      transactionId: t.tx_hash, status: 'confirmed', authorization: 'used', kind: 'transfer', network: payNetwork, contractAddress: vixpContract,
      tokenSymbol: 'VIXP', fromAddress: t.from_address, toAddress: t.to_address, amount: '2.5',
    });
  });

  test('recorded used but the node has no final receipt now (a lost block): pending until it is mined again', async () => {
    const t = await transfer({ status: 'used' });
    assert.equal((await getTransferStatus(deps, payNetwork, t.tx_hash!)).status, 'pending');
    final.add(t.tx_hash!);
    assert.equal((await getTransferStatus(deps, payNetwork, t.tx_hash!)).status, 'confirmed');
  });

  test('reserved and submitted are pending without asking the node; canceled, expired and void failed with 502', async () => {
    for (const status of ['reserved', 'submitted'] as const) {
      const t = await transfer({ status });
      final.add(t.tx_hash!);
      asked.length = 0;
      const answer = await getTransferStatus(deps, payNetwork, t.tx_hash!);
      assert.deepEqual([answer.status, answer.failureCode, answer.failureMessage], ['pending', undefined, undefined], status);
      assert.deepEqual(asked, [], 'only a confirmed one is checked on the node');
    }
    for (const status of ['canceled', 'expired', 'void'] as const) {
      const t = await transfer({ status });
      final.add(t.tx_hash!);
      const answer = await getTransferStatus(deps, payNetwork, t.tx_hash!);
      assert.deepEqual([answer.status, answer.failureCode, answer.failureMessage], ['failed', '502', 'the transfer was not executed on chain and can no longer be'], status);
    }
  });

  test('a transaction that is not a 0x-prefixed 32-byte hash is refused, naming the field', async () => {
    const hash = randomHash();
    for (const bad of ['nonsense', hash.slice(2), `${hash}00`, `x${hash}`, `${hash.slice(0, -1)}g`]) {
      assert.deepEqual(await refusalOf(getTransferStatus(deps, payNetwork, bad)),
        { code: 'request.invalid', message: 'transactionId must be a 0x-prefixed 32-byte hex hash', details: 'transactionId' }, bad);
    }
  });

  test('a settlement batch of several accounts needs fromAddress, which picks the caller\'s transfer', async () => {
    const txHash = randomHash();
    const mine = await transfer({ status: 'submitted', txHash, value: '1000000' });
    await transfer({ status: 'submitted', txHash });
    await transfer({ status: 'submitted', txHash });
    assert.deepEqual(await refusalOf(getTransferStatus(deps, payNetwork, txHash)),
      { code: 'request.invalid', message: `transaction ${txHash} carries transfers of 3 accounts: send fromAddress`, details: 'fromAddress' });
    const picked = await getTransferStatus(deps, payNetwork, txHash, mine.from_address);
    assert.equal('amount' in picked && picked.amount, '1');
    const stranger = holder();
    assert.deepEqual(await refusalOf(getTransferStatus(deps, payNetwork, txHash, stranger)),
      { code: 'request.not_found', message: `no transfer from ${stranger} in ${txHash} on ${payNetwork}`, details: undefined });
  });

  test('one account\'s transfers in one transaction: the first, without fromAddress', async () => {
    const txHash = randomHash();
    const from = holder();
    await transfer({ status: 'submitted', txHash, from, value: '1000000' });
    await transfer({ status: 'submitted', txHash, from: from.toUpperCase().replace('0X', '0x'), value: '3000000' });
    const answer = await getTransferStatus(deps, payNetwork, txHash);
    assert.equal('amount' in answer && answer.amount, '1');
  });

  test('a relayed transaction that carries no transfer (a token deployment) answers its own status and kind', async () => {
    const confirmed = await relayed('createToken', 'confirmed');
    final.add(confirmed);
    assert.deepEqual(await getTransferStatus(deps, payNetwork, confirmed), { transactionId: confirmed, status: 'confirmed', kind: 'createToken', network: payNetwork });
    const lost = await relayed('createToken', 'confirmed');
    assert.equal((await getTransferStatus(deps, payNetwork, lost)).status, 'pending', 'no final receipt on the node now');
    const signed = await relayed('mint', 'signed');
    final.add(signed);
    assert.deepEqual(await getTransferStatus(deps, payNetwork, signed), { transactionId: signed, status: 'pending', kind: 'mint', network: payNetwork });
    const failed = await relayed('createToken', 'failed');
    final.add(failed);
    assert.deepEqual(await getTransferStatus(deps, payNetwork, failed), {
      transactionId: failed, status: 'failed', kind: 'createToken', network: payNetwork, failureCode: '502', failureMessage: 'the transaction reverted on chain',
    });
    // Asked for a sender, a transaction with no transfer of it is not found, whatever else it is.
    assert.equal((await refusalOf(getTransferStatus(deps, payNetwork, confirmed, holder())))?.code, 'request.not_found');
  });

  test('an unknown transaction is not found', async () => {
    const txHash = randomHash();
    assert.deepEqual(await refusalOf(getTransferStatus(deps, payNetwork, txHash)),
      { code: 'request.not_found', message: `no transaction ${txHash} of the platform on ${payNetwork}`, details: undefined });
  });
});

describe('transferStatusOf', () => {
  const base = {
    network: payNetwork, reference: 'pay:1234', status: 'used' as const, txHash: randomHash(), contractAddress: vixpContract,
    fromAddress: '0x01', toAddress: '0x02', value: '1500000000000000000', tokenSymbol: 'VIXP', decimals: 18, updatedAt: 1,
  };

  test('the kind is the reference\'s prefix; a token the platform has no row of is in 18 decimals, without a symbol', () => {
    assert.deepEqual(transferStatusOf(base), {
      transactionId: base.txHash, status: 'confirmed', authorization: 'used', kind: 'pay', network: payNetwork, contractAddress: vixpContract,
      tokenSymbol: 'VIXP', fromAddress: '0x01', toAddress: '0x02', amount: '1.5',
    });
    const unknownToken = transferStatusOf({ ...base, reference: 'reward-cancel:9:x', tokenSymbol: null, decimals: null });
    assert.deepEqual([unknownToken.kind, unknownToken.tokenSymbol, unknownToken.amount], ['reward-cancel', '', '1.5']);
    assert.equal(transferStatusOf({ ...base, decimals: 6 }).amount, '1500000000000');
  });

  test('an authorization never sent has no transaction yet', () => {
    assert.deepEqual([transferStatusOf({ ...base, status: 'reserved', txHash: null }).transactionId, transferStatusOf({ ...base, status: 'reserved', txHash: null }).status], ['', 'pending']);
  });
});
