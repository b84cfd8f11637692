import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from './db.ts';
import type { AuthorizationStatus } from './schema.ts';
import { createChainJournal } from './chain-journal-repository.ts';
import { createAuthorizationRepository } from './authorization-repository.ts';
import type { ChainJournal, SignTransaction } from '../chain/chain-journal.ts';

// The relayer's journal as an operator reads it back: the rows of chain_txs, chain_tx_versions,
// relayer_nonces and authorizations after each step; every nonce taken once, nothing journaled twice.

const laneA = '0x00000000000000000000000000000000000000a1';
const laneB = '0x00000000000000000000000000000000000000b2';
const hash = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

interface Setup { store: Store; journal: ChainJournal; signed: Array<{ nonce: number; included: readonly string[] }>; sign: SignTransaction }

for (const factory of storeFactories) {
  describe(`chain journal (${factory.name})`, () => {
    async function withJournal(run: (s: Setup) => Promise<void>): Promise<void> {
      const { store, dispose } = await factory.open();
      let ids = 0;
      let hashes = 0;
      const signed: Setup['signed'] = [];
      const sign: SignTransaction = async (nonce, included) => {
        signed.push({ nonce, included });
        hashes += 1;
        return { rawTx: `0xraw${hashes}`, txHash: hash(hashes) };
      };
      try {
        await run({ store, journal: createChainJournal(store.db, () => `tx-${++ids}`), signed, sign });
      } finally {
        await dispose();
      }
    }

    const authorization = (nonce: string, status: AuthorizationStatus, txHash: string | null = null) => ({
      nonce, network: 'ethereum', reference: `ref-${nonce}`, contract_address: '0xc0', from_address: '0xf0', to_address: '0xe0',
      value: '1000', valid_before: 2_000_000_000, from_block: 0, status, tx_hash: txHash, cancel_tx_hash: null,
      created_at: 1, updated_at: 1, chain_nonce: null,
    });
    const authorizations = async (store: Store) => (await store.db.selectFrom('authorizations')
      .select(['nonce', 'status', 'tx_hash', 'updated_at']).orderBy('nonce').execute())
      .map((r) => ({ ...r, updated_at: Number(r.updated_at) }));
    const nonces = async (store: Store) => (await store.db.selectFrom('relayer_nonces').selectAll()
      .orderBy('network').orderBy('address').execute()).map((r) => ({ ...r, next_nonce: Number(r.next_nonce) }));
    const txs = async (store: Store) => (await store.db.selectFrom('chain_txs')
      .select(['id', 'network', 'relayer', 'nonce', 'tx_hash', 'raw_tx', 'status', 'block_number', 'error', 'updated_at'])
      .orderBy('id').execute())
      .map((r) => ({ ...r, nonce: Number(r.nonce), block_number: r.block_number === null ? null : Number(r.block_number), updated_at: Number(r.updated_at) }));
    const versions = async (store: Store) => (await store.db.selectFrom('chain_tx_versions').selectAll().orderBy('tx_hash').execute())
      .map((r) => ({ ...r, created_at: Number(r.created_at) }));
    const plain = (network = 'ethereum', relayer = laneA) => ({ network, relayer, intent: { kind: 'transfer' } });

    test('a lane\'s stored nonce starts at the chain\'s, rises when the chain is ahead, never falls; each journaling takes the next, once', async () => {
      await withJournal(async ({ store, journal, signed, sign }) => {
        await journal.syncNonce('ethereum', laneA, 5);
        await journal.syncNonce('ethereum', laneB, 2);
        await journal.syncNonce('optimism', laneA, 9);
        assert.deepEqual(await nonces(store), [
          { network: 'ethereum', address: laneA, next_nonce: 5 },
          { network: 'ethereum', address: laneB, next_nonce: 2 },
          { network: 'optimism', address: laneA, next_nonce: 9 },
        ]);
        await journal.syncNonce('ethereum', laneA, 7);
        await journal.syncNonce('ethereum', laneB, 1);
        assert.deepEqual((await nonces(store)).map((r) => r.next_nonce), [7, 2, 9]);

        await journal.journal(plain(), 10, sign);
        await journal.journal(plain(), 11, sign);
        await journal.journal(plain('ethereum', laneB), 12, sign);
        await journal.journal(plain('optimism'), 13, sign);
        assert.deepEqual(signed.map((s) => s.nonce), [7, 8, 2, 9]);
        assert.deepEqual((await nonces(store)).map((r) => r.next_nonce), [9, 3, 10]);
        // The chain catching up with what was journaled changes nothing.
        await journal.syncNonce('ethereum', laneA, 9);
        await journal.journal(plain(), 14, sign);
        assert.deepEqual(signed.map((s) => s.nonce), [7, 8, 2, 9, 9]);
      });
    });

    test('journaling a lane never synced fails and stores nothing', async () => {
      await withJournal(async ({ store, journal, signed, sign }) => {
        await assert.rejects(journal.journal(plain(), 10, sign));
        assert.deepEqual(signed, []);
        assert.deepEqual(await txs(store), []);
      });
    });

    test('a journaled transaction is one signed row with its intent, bytes and hash, before anything is broadcast', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await journal.syncNonce('bnb', laneA, 3);
        const full = await journal.journal({
          network: 'bnb', relayer: laneA,
          intent: { kind: 'transfer', reference: 'pay-1', fromAddress: '0xf1', toAddress: '0xe1', contractAddress: '0xc1', amount: '12345678901234567890' },
        }, 1_000, sign);
        const bare = await journal.journal({ network: 'bnb', relayer: laneA, intent: { kind: 'deploy' } }, 2_000, sign);
        assert.deepEqual(full, { id: 'tx-1', rawTx: '0xraw1', txHash: hash(1), included: [] });
        assert.deepEqual(bare, { id: 'tx-2', rawTx: '0xraw2', txHash: hash(2), included: [] });
        const rows = await store.db.selectFrom('chain_txs').selectAll().orderBy('id').execute();
        assert.deepEqual(rows.map((r) => ({ ...r, nonce: Number(r.nonce), created_at: Number(r.created_at), updated_at: Number(r.updated_at) })), [
          {
            id: 'tx-1', network: 'bnb', kind: 'transfer', reference: 'pay-1', relayer: laneA, nonce: 3, raw_tx: '0xraw1', tx_hash: hash(1),
            from_address: '0xf1', to_address: '0xe1', contract_address: '0xc1', amount: '12345678901234567890', status: 'signed',
            block_number: null, block_timestamp: null, tx_index: null, gas_used: null, fee_wei: null, l1_fee_wei: null, operator_fee_wei: null, error: null, created_at: 1_000, updated_at: 1_000,
          },
          {
            id: 'tx-2', network: 'bnb', kind: 'deploy', reference: null, relayer: laneA, nonce: 4, raw_tx: '0xraw2', tx_hash: hash(2),
            from_address: null, to_address: null, contract_address: null, amount: null, status: 'signed',
            block_number: null, block_timestamp: null, tx_index: null, gas_used: null, fee_wei: null, l1_fee_wei: null, operator_fee_wei: null, error: null, created_at: 2_000, updated_at: 2_000,
          },
        ]);
      });
    });

    test('a batch carries only its still-reserved authorizations, in its order, each submitted with the transaction\'s hash', async () => {
      await withJournal(async ({ store, journal, signed, sign }) => {
        await store.db.insertInto('authorizations').values([
          authorization('n1', 'reserved'), authorization('n2', 'expired'), authorization('n3', 'reserved'),
          authorization('n4', 'submitted', hash(99)), authorization('n5', 'reserved'),
        ]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        const result = await journal.journal({ ...plain(), authorizationNonces: ['n3', 'n2', 'n1', 'n4'] }, 50, sign);
        assert.notEqual(result, 'released');
        assert.deepEqual(result, { id: 'tx-1', rawTx: '0xraw1', txHash: hash(1), included: ['n3', 'n1'] });
        assert.deepEqual(signed, [{ nonce: 0, included: ['n3', 'n1'] }]);
        assert.deepEqual(await authorizations(store), [
          { nonce: 'n1', status: 'submitted', tx_hash: hash(1), updated_at: 50 },
          { nonce: 'n2', status: 'expired', tx_hash: null, updated_at: 1 },
          { nonce: 'n3', status: 'submitted', tx_hash: hash(1), updated_at: 50 },
          { nonce: 'n4', status: 'submitted', tx_hash: hash(99), updated_at: 1 },
          { nonce: 'n5', status: 'reserved', tx_hash: null, updated_at: 1 },
        ]);
      });
    });

    test('a batch none of whose authorizations is reserved any more is released: nothing journaled, no nonce taken, no authorization touched', async () => {
      await withJournal(async ({ store, journal, signed, sign }) => {
        await store.db.insertInto('authorizations').values([authorization('n1', 'expired'), authorization('n2', 'canceled'), authorization('n3', 'reserved')]).execute();
        await journal.syncNonce('ethereum', laneA, 4);
        assert.equal(await journal.journal({ ...plain(), authorizationNonces: ['n1', 'n2'] }, 50, sign), 'released');
        assert.equal(await journal.journal({ ...plain(), authorizationNonces: [] }, 50, sign), 'released');
        assert.deepEqual(signed, []);
        assert.deepEqual(await txs(store), []);
        assert.deepEqual((await nonces(store)).map((r) => r.next_nonce), [4]);
        assert.deepEqual((await authorizations(store)).map((r) => r.status), ['expired', 'canceled', 'reserved']);
        // The lane's next journaling gets the nonce the released one did not take.
        await journal.journal({ ...plain(), authorizationNonces: ['n3'] }, 60, sign);
        assert.deepEqual(signed, [{ nonce: 4, included: ['n3'] }]);
      });
    });

    test('a signing that fails rolls the whole journaling back: the authorizations stay reserved and the nonce is not used', async () => {
      await withJournal(async ({ store, journal, signed, sign }) => {
        await store.db.insertInto('authorizations').values([authorization('n1', 'reserved')]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        await assert.rejects(journal.journal({ ...plain(), authorizationNonces: ['n1'] }, 50, async () => { throw new Error('key unavailable'); }), /key unavailable/);
        assert.deepEqual(await txs(store), []);
        assert.deepEqual(await authorizations(store), [{ nonce: 'n1', status: 'reserved', tx_hash: null, updated_at: 1 }]);
        assert.deepEqual((await nonces(store)).map((r) => r.next_nonce), [0]);
        await journal.journal({ ...plain(), authorizationNonces: ['n1'] }, 60, sign);
        assert.deepEqual(signed, [{ nonce: 0, included: ['n1'] }]);
      });
    });

    test('mined: the row keeps the block, its timestamp and index, gas and fees (execution, L1 data, operator); reverted is failed; a position without details leaves them empty', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal(plain(), 10, sign);
        await journal.journal(plain(), 10, sign);
        await journal.journal(plain(), 10, sign);
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 7, blockTimestamp: 1_700_000_000, txIndex: 2, gasUsed: 51_234, feeWei: 2n ** 64n + 1n, l1FeeWei: 2n ** 70n + 3n, operatorFeeWei: 16_000n }, 20);
        await journal.markMined('tx-2', 'failed', { blockNumber: 8, txIndex: 0 }, 30);
        await journal.markMined('tx-3', 'confirmed', { blockNumber: 9 }, 40, hash(3));
        const rows = await store.db.selectFrom('chain_txs').select(['id', 'status', 'block_number', 'block_timestamp', 'tx_index', 'gas_used', 'fee_wei', 'l1_fee_wei', 'operator_fee_wei', 'error', 'updated_at', 'tx_hash'])
          .orderBy('id').execute();
        assert.deepEqual(rows.map((r) => ({
          ...r, block_number: Number(r.block_number), block_timestamp: r.block_timestamp === null ? null : Number(r.block_timestamp),
          tx_index: r.tx_index === null ? null : Number(r.tx_index), gas_used: r.gas_used === null ? null : Number(r.gas_used), updated_at: Number(r.updated_at),
        })), [
          { id: 'tx-1', status: 'confirmed', block_number: 7, block_timestamp: 1_700_000_000, tx_index: 2, gas_used: 51_234, fee_wei: '18446744073709551617', l1_fee_wei: '1180591620717411303427', operator_fee_wei: '16000', error: null, updated_at: 20, tx_hash: hash(1) },
          { id: 'tx-2', status: 'failed', block_number: 8, block_timestamp: null, tx_index: 0, gas_used: null, fee_wei: null, l1_fee_wei: null, operator_fee_wei: null, error: 'reverted', updated_at: 30, tx_hash: hash(2) },
          { id: 'tx-3', status: 'confirmed', block_number: 9, block_timestamp: null, tx_index: null, gas_used: null, fee_wei: null, l1_fee_wei: null, operator_fee_wei: null, error: null, updated_at: 40, tx_hash: hash(3) },
        ]);
        assert.deepEqual(await versions(store), []);
      });
    });

    test('re-priced: the row holds the new bytes, the old version is kept, its authorizations follow, submitted (one recorded used in the old version too: the chain may have lost it); a stale or mined re-pricing changes nothing', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await store.db.insertInto('authorizations').values([authorization('n1', 'reserved'), authorization('n2', 'reserved')]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal({ ...plain(), authorizationNonces: ['n1', 'n2'] }, 10, sign);
        await store.db.updateTable('authorizations').set({ status: 'used' }).where('nonce', '=', 'n2').execute();
        assert.equal(await journal.replace('tx-1', hash(1), { rawTx: '0xnew1', txHash: hash(101) }, 20), true);
        // Another instance re-priced it already: the hash it knew is no longer the row's.
        assert.equal(await journal.replace('tx-1', hash(1), { rawTx: '0xnew2', txHash: hash(102) }, 30), false);
        assert.equal(await journal.replace('tx-1', hash(101), { rawTx: '0xnew3', txHash: hash(103) }, 40), true);
        assert.equal(await journal.replace('tx-unknown', hash(1), { rawTx: '0xnew4', txHash: hash(104) }, 45), false);
        assert.deepEqual((await txs(store)).map((r) => [r.tx_hash, r.raw_tx, r.status, r.updated_at]), [[hash(103), '0xnew3', 'signed', 40]]);
        assert.deepEqual(await versions(store), [
          { tx_hash: hash(1), chain_tx_id: 'tx-1', raw_tx: '0xraw1', created_at: 20 },
          { tx_hash: hash(101), chain_tx_id: 'tx-1', raw_tx: '0xnew1', created_at: 40 },
        ]);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.tx_hash]), [['n1', 'submitted', hash(103)], ['n2', 'submitted', hash(103)]]);
        assert.deepEqual(await journal.hashesOf('tx-1'), [hash(103), hash(101), hash(1)]);
        assert.deepEqual(await journal.hashesOf('tx-unknown'), []);

        await journal.markMined('tx-1', 'confirmed', { blockNumber: 5 }, 50);
        assert.equal(await journal.replace('tx-1', hash(103), { rawTx: '0xnew5', txHash: hash(105) }, 60), false);
        assert.deepEqual((await txs(store)).map((r) => [r.tx_hash, r.raw_tx, r.status]), [[hash(103), '0xnew3', 'confirmed']]);
        assert.equal((await versions(store)).length, 2);
      });
    });

    test('an earlier version mined instead of the re-priced one: the row, its versions and its authorizations name what the chain holds', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await store.db.insertInto('authorizations').values([authorization('n1', 'reserved'), authorization('n9', 'submitted', hash(77))]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal({ ...plain(), authorizationNonces: ['n1'] }, 10, sign);
        await journal.journal(plain(), 10, sign);
        await journal.replace('tx-1', hash(1), { rawTx: '0xnew1', txHash: hash(101) }, 20);
        await journal.replace('tx-1', hash(101), { rawTx: '0xnew2', txHash: hash(102) }, 30);
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 6, txIndex: 1 }, 40, hash(1));
        assert.deepEqual((await txs(store)).map((r) => [r.id, r.tx_hash, r.raw_tx, r.status, r.block_number]), [
          ['tx-1', hash(1), '0xraw1', 'confirmed', 6],
          ['tx-2', hash(2), '0xraw2', 'signed', null],
        ]);
        assert.deepEqual((await versions(store)).map((v) => [v.tx_hash, v.chain_tx_id, v.raw_tx, v.created_at]), [
          [hash(101), 'tx-1', '0xnew1', 30],
          [hash(102), 'tx-1', '0xnew2', 40],
        ]);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.tx_hash]), [['n1', hash(1)], ['n9', hash(77)]]);
        assert.deepEqual(new Set(await journal.hashesOf('tx-1')), new Set([hash(1), hash(101), hash(102)]));
        assert.equal((await journal.hashesOf('tx-1'))[0], hash(1));
      });
    });

    test('a hash that is neither the row\'s nor one of its versions is recorded mined as the row stands', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal(plain(), 10, sign);
        await journal.journal(plain(), 10, sign);
        await journal.replace('tx-2', hash(2), { rawTx: '0xnew2', txHash: hash(102) }, 20);
        // tx-2's version is not tx-1's: tx-1 keeps its bytes.
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 3 }, 30, hash(2));
        assert.deepEqual((await txs(store)).map((r) => [r.id, r.tx_hash, r.raw_tx, r.status]), [
          ['tx-1', hash(1), '0xraw1', 'confirmed'], ['tx-2', hash(102), '0xnew2', 'signed'],
        ]);
        assert.deepEqual((await versions(store)).map((v) => [v.tx_hash, v.chain_tx_id]), [[hash(2), 'tx-2']]);
      });
    });

    test('replaced (its nonce used by another transaction): a signed row becomes failed, never sent again; a mined one stays', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal(plain(), 10, sign);
        await journal.journal(plain(), 10, sign);
        await journal.markMined('tx-2', 'confirmed', { blockNumber: 4 }, 20);
        await journal.markReplaced('tx-1', 30);
        await journal.markReplaced('tx-2', 30);
        assert.deepEqual((await txs(store)).map((r) => [r.id, r.status, r.error, r.updated_at]), [['tx-1', 'failed', 'replaced', 30], ['tx-2', 'confirmed', null, 20]]);
        assert.deepEqual(await journal.listUnmined('ethereum', laneA), []);
      });
    });

    test('the unmined of a lane, in nonce order, with their superseded hashes newest first and whether an authorization is recorded used in the current version; other lanes, networks and mined rows left out', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 10);
        await journal.syncNonce('ethereum', laneB, 0);
        await journal.syncNonce('optimism', laneA, 0);
        assert.deepEqual(await journal.listUnmined('ethereum', laneA), []);
        await journal.journal(plain(), 100, sign); // tx-1 nonce 10
        await journal.journal(plain('ethereum', laneB), 100, sign); // tx-2
        await journal.journal(plain('optimism'), 100, sign); // tx-3
        await journal.journal(plain(), 200, sign); // tx-4 nonce 11
        await journal.journal(plain(), 300, sign); // tx-5 nonce 12
        await journal.markMined('tx-4', 'confirmed', { blockNumber: 2 }, 400);
        await journal.replace('tx-1', hash(1), { rawTx: '0xnew1', txHash: hash(101) }, 500);
        await journal.replace('tx-1', hash(101), { rawTx: '0xnew2', txHash: hash(102) }, 600);
        await journal.replace('tx-5', hash(5), { rawTx: '0xnew5', txHash: hash(105) }, 700);
        await journal.replace('tx-2', hash(2), { rawTx: '0xnewB', txHash: hash(106) }, 800);
        assert.deepEqual(await journal.listUnmined('ethereum', laneA), [
          { id: 'tx-1', txHash: hash(102), rawTx: '0xnew2', nonce: 10, createdAt: 100, signedAt: 600, supersededHashes: [hash(101), hash(1)], seenExecuted: false },
          { id: 'tx-5', txHash: hash(105), rawTx: '0xnew5', nonce: 12, createdAt: 300, signedAt: 700, supersededHashes: [hash(5)], seenExecuted: false },
        ]);
        assert.deepEqual(await journal.listUnmined('optimism', laneA), [
          { id: 'tx-3', txHash: hash(3), rawTx: '0xraw3', nonce: 0, createdAt: 100, signedAt: 100, supersededHashes: [], seenExecuted: false },
        ]);
        // An authorization recorded used in tx-5's current version, one in an older version of tx-1's.
        await store.db.insertInto('authorizations').values([authorization('n5', 'used', hash(105)), authorization('n1', 'used', hash(101))]).execute();
        assert.deepEqual((await journal.listUnmined('ethereum', laneA)).map((tx) => [tx.id, tx.seenExecuted]), [['tx-1', false], ['tx-5', true]]);
      });
    });

    test('lost (mined at or above the lane\'s nonce on the node), in the order mined: block, then index, then nonce; nothing for no lane', async () => {
      await withJournal(async ({ journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.syncNonce('ethereum', laneB, 0);
        await journal.syncNonce('optimism', laneA, 0);
        for (let i = 0; i < 5; i += 1) await journal.journal(plain(), 10, sign); // tx-1..5: laneA nonces 0..4
        for (let i = 0; i < 3; i += 1) await journal.journal(plain('ethereum', laneB), 10, sign); // tx-6..8: laneB nonces 0..2
        await journal.journal(plain('optimism'), 10, sign); // tx-9
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 1, txIndex: 0 }, 20); // below laneA's nonce on the node
        await journal.markMined('tx-2', 'confirmed', { blockNumber: 3, txIndex: 1, blockTimestamp: 1_700_000_003 }, 20);
        await journal.markMined('tx-3', 'failed', { blockNumber: 2, txIndex: 4 }, 20);
        await journal.markMined('tx-4', 'confirmed', { blockNumber: 3, txIndex: 0 }, 20);
        await journal.markReplaced('tx-5', 20); // failed without a block: never mined
        await journal.markMined('tx-6', 'confirmed', { blockNumber: 2 }, 20);
        await journal.markMined('tx-7', 'confirmed', { blockNumber: 2 }, 20);
        await journal.markMined('tx-8', 'confirmed', { blockNumber: 2, txIndex: 9 }, 20);
        await journal.markMined('tx-9', 'confirmed', { blockNumber: 1 }, 20);
        assert.deepEqual(await journal.listLost('ethereum', new Map()), []);
        const lost = await journal.listLost('ethereum', new Map([[laneA, 1], [laneB, 0]]));
        assert.deepEqual(lost.map((t) => [t.id, t.blockNumber, t.txIndex]), [
          ['tx-6', 2, undefined], ['tx-7', 2, undefined], ['tx-3', 2, 4], ['tx-8', 2, 9], ['tx-4', 3, 0], ['tx-2', 3, 1],
        ]);
        assert.deepEqual(lost.find((t) => t.id === 'tx-2'), {
          id: 'tx-2', relayer: laneA, nonce: 1, txHash: hash(2), rawTx: '0xraw2', status: 'confirmed', blockNumber: 3, blockTimestamp: 1_700_000_003, txIndex: 1,
        });
        assert.deepEqual(lost.find((t) => t.id === 'tx-3'), {
          id: 'tx-3', relayer: laneA, nonce: 2, txHash: hash(3), rawTx: '0xraw3', status: 'failed', blockNumber: 2, blockTimestamp: undefined, txIndex: 4,
        });
        // Only the lanes named: laneB at 2 keeps its nonces 0 and 1.
        assert.deepEqual((await journal.listLost('ethereum', new Map([[laneB, 2]]))).map((t) => t.id), ['tx-8']);
      });
    });

    test('lost transactions of one block without indexes keep each lane\'s nonce order', async () => {
      await withJournal(async ({ journal, sign }) => {
        await journal.syncNonce('ethereum', laneB, 0);
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal(plain('ethereum', laneB), 10, sign); // tx-1 B0
        await journal.journal(plain(), 10, sign); // tx-2 A0
        await journal.journal(plain('ethereum', laneB), 10, sign); // tx-3 B1
        await journal.journal(plain(), 10, sign); // tx-4 A1
        // Recorded mined in reverse nonce order, all in block 5 with no index.
        for (const id of ['tx-4', 'tx-3', 'tx-2', 'tx-1']) await journal.markMined(id, 'confirmed', { blockNumber: 5 }, 20);
        const lost = await journal.listLost('ethereum', new Map([[laneA, 0], [laneB, 0]]));
        const order = (lane: string) => lost.filter((t) => t.relayer === lane).map((t) => t.nonce);
        assert.deepEqual(order(laneA), [0, 1]);
        assert.deepEqual(order(laneB), [0, 1]);
        assert.equal(lost.length, 4);
      });
    });

    test('reopened from the node\'s nonce: those mined above it are unmined again and their used authorizations submitted again; nothing else moves', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await store.db.insertInto('authorizations').values([
          authorization('n1', 'reserved'), authorization('n2', 'reserved'), authorization('n3', 'reserved'), authorization('n4', 'reserved'),
        ]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.syncNonce('ethereum', laneB, 0);
        await journal.journal({ ...plain(), authorizationNonces: ['n1'] }, 10, sign); // tx-1 A0
        await journal.journal({ ...plain(), authorizationNonces: ['n2'] }, 10, sign); // tx-2 A1
        await journal.journal({ ...plain(), authorizationNonces: ['n3'] }, 10, sign); // tx-3 A2
        await journal.journal({ ...plain('ethereum', laneB), authorizationNonces: ['n4'] }, 10, sign); // tx-4 B0
        for (const [id, n] of [['tx-1', 'n1'], ['tx-2', 'n2'], ['tx-4', 'n4']] as const) {
          await journal.markMined(id, 'confirmed', { blockNumber: 3 }, 20);
          await journal.markAuthorizationsUsed((await journal.hashesOf(id))[0] as string, [n], 20);
        }
        await journal.markMined('tx-3', 'failed', { blockNumber: 3 }, 20);
        assert.equal(await journal.reopenFrom('ethereum', laneA, 1, 30), 2);
        assert.deepEqual((await txs(store)).map((r) => [r.id, r.status, r.block_number, r.error, r.updated_at]), [
          ['tx-1', 'confirmed', 3, null, 20], ['tx-2', 'signed', null, null, 30], ['tx-3', 'signed', null, null, 30], ['tx-4', 'confirmed', 3, null, 20],
        ]);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.updated_at]), [
          ['n1', 'used', 20], ['n2', 'submitted', 30], ['n3', 'submitted', 10], ['n4', 'used', 20],
        ]);
        assert.deepEqual((await journal.listUnmined('ethereum', laneA)).map((t) => t.id), ['tx-2', 'tx-3']);
        // Nothing at or above the nonce is mined any more: nothing to reopen, no authorization touched.
        assert.equal(await journal.reopenFrom('ethereum', laneA, 1, 40), 0);
        assert.equal(await journal.reopenFrom('optimism', laneA, 0, 40), 0);
        assert.deepEqual((await authorizations(store)).map((r) => r.updated_at), [20, 30, 10, 20]);
      });
    });

    test('the highest nonce of a lane recorded mined since a time; none when nothing mined since', async () => {
      await withJournal(async ({ journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.syncNonce('ethereum', laneB, 0);
        assert.equal(await journal.lastMinedNonce('ethereum', laneA, 0), undefined);
        for (let i = 0; i < 4; i += 1) await journal.journal(plain(), 10, sign); // tx-1..4 nonces 0..3
        await journal.journal(plain('ethereum', laneB), 10, sign); // tx-5
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 1 }, 100);
        await journal.markMined('tx-2', 'failed', { blockNumber: 2 }, 200);
        await journal.markReplaced('tx-4', 300); // failed, never mined
        await journal.markMined('tx-5', 'confirmed', { blockNumber: 2 }, 300);
        assert.equal(await journal.lastMinedNonce('ethereum', laneA, 100), 1);
        assert.equal(await journal.lastMinedNonce('ethereum', laneA, 200), 1);
        assert.equal(await journal.lastMinedNonce('ethereum', laneA, 201), undefined);
        assert.equal(await journal.lastMinedNonce('ethereum', laneB, 0), 0);
        assert.equal(await journal.lastMinedNonce('optimism', laneA, 0), undefined);
      });
    });

    test('authorizations marked used: only the transaction\'s submitted ones among those named; its others recorded used put back', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        await store.db.insertInto('authorizations').values([
          authorization('n1', 'reserved'), authorization('n2', 'reserved'), authorization('n3', 'reserved'), authorization('n4', 'submitted', hash(50)),
        ]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        await journal.journal({ ...plain(), authorizationNonces: ['n1', 'n2', 'n3'] }, 10, sign);
        await store.db.updateTable('authorizations').set({ status: 'void' }).where('nonce', '=', 'n3').execute();
        await journal.markAuthorizationsUsed(hash(1), [], 20);
        await journal.markAuthorizationsUsed(hash(1), ['n1', 'n3', 'n4'], 20);
        await journal.markAuthorizationsUsed(hash(50), ['n2'], 20);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.updated_at]), [
          ['n1', 'used', 20], ['n2', 'submitted', 10], ['n3', 'void', 10], ['n4', 'submitted', 1],
        ]);
        // The chain lost the block; the same transaction, sent again, executed only n2: n1's use was the lost version's.
        await journal.markAuthorizationsUsed(hash(1), ['n2'], 30);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.updated_at]), [
          ['n1', 'submitted', 30], ['n2', 'used', 30], ['n3', 'void', 10], ['n4', 'submitted', 1],
        ]);
        // The same receipt read again changes nothing.
        await journal.markAuthorizationsUsed(hash(1), ['n2'], 35);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.updated_at]), [
          ['n1', 'submitted', 30], ['n2', 'used', 30], ['n3', 'void', 10], ['n4', 'submitted', 1],
        ]);
        // Then reverted (a receipt executing none): none of its uses stands; other transactions' rows are untouched.
        await store.db.updateTable('authorizations').set({ status: 'used' }).where('nonce', '=', 'n4').execute();
        await journal.markAuthorizationsUsed(hash(1), [], 40);
        assert.deepEqual((await authorizations(store)).map((r) => [r.nonce, r.status, r.updated_at]), [
          ['n1', 'submitted', 30], ['n2', 'submitted', 40], ['n3', 'void', 10], ['n4', 'used', 1],
        ]);
      });
    });

    test('the latest transaction of a kind under a reference, and the latest confirmed deployment', async () => {
      await withJournal(async ({ journal, sign }) => {
        await journal.syncNonce('ethereum', laneA, 0);
        const entry = (kind: string, reference: string, network = 'ethereum') => ({ network, relayer: laneA, intent: { kind, reference } });
        assert.equal(await journal.findLatest('ethereum', 'deploy', 'vixp'), undefined);
        assert.equal(await journal.findConfirmedDeployment('ethereum', 'vixp'), undefined);
        await journal.journal(entry('deploy', 'vixp'), 10, sign); // tx-1
        await journal.journal(entry('deploy', 'vixp'), 20, sign); // tx-2
        await journal.journal(entry('deploy', 'vixp'), 30, sign); // tx-3
        await journal.journal(entry('transfer', 'vixp'), 40, sign); // tx-4
        await journal.journal(entry('deploy', 'other'), 50, sign); // tx-5
        await journal.syncNonce('optimism', laneA, 0);
        await journal.journal(entry('deploy', 'vixp', 'optimism'), 60, sign); // tx-6
        await journal.markMined('tx-1', 'confirmed', { blockNumber: 1 }, 70);
        await journal.markMined('tx-2', 'confirmed', { blockNumber: 1 }, 70);
        await journal.markMined('tx-5', 'confirmed', { blockNumber: 1 }, 70);
        await journal.markMined('tx-6', 'confirmed', { blockNumber: 1 }, 70);
        await journal.markMined('tx-3', 'failed', { blockNumber: 2 }, 80);
        assert.deepEqual(await journal.findLatest('ethereum', 'deploy', 'vixp'), { txHash: hash(3), status: 'failed' });
        assert.deepEqual(await journal.findLatest('ethereum', 'transfer', 'vixp'), { txHash: hash(4), status: 'signed' });
        assert.equal(await journal.findConfirmedDeployment('ethereum', 'vixp'), hash(2));
        assert.equal(await journal.findConfirmedDeployment('optimism', 'vixp'), hash(6));
        assert.equal(await journal.findConfirmedDeployment('ethereum', 'none'), undefined);
      });
    });

    test('a deployment recorded again replaces the one of its name on its network only', async () => {
      await withJournal(async ({ store, journal }) => {
        assert.equal(await journal.findDeployment('ethereum', 'vixp'), undefined);
        await journal.recordDeployment({ network: 'ethereum', name: 'vixp', chainId: 31337, address: '0xa1', txHash: hash(1) }, 10);
        await journal.recordDeployment({ network: 'optimism', name: 'vixp', chainId: 31338, address: '0xa2', txHash: hash(2) }, 10);
        await journal.recordDeployment({ network: 'ethereum', name: 'settlement', chainId: 31337, address: '0xa3', txHash: hash(3) }, 10);
        await journal.recordDeployment({ network: 'ethereum', name: 'vixp', chainId: 31337, address: '0xa4', txHash: hash(4) }, 20);
        assert.deepEqual(await journal.findDeployment('ethereum', 'vixp'), { chainId: 31337, address: '0xa4' });
        assert.deepEqual(await journal.findDeployment('optimism', 'vixp'), { chainId: 31338, address: '0xa2' });
        assert.deepEqual(await journal.findDeployment('ethereum', 'settlement'), { chainId: 31337, address: '0xa3' });
        const rows = await store.db.selectFrom('deployments').selectAll().orderBy('network').orderBy('name').execute();
        assert.deepEqual(rows.map((r) => [r.network, r.name, r.address, r.tx_hash, Number(r.created_at)]), [
          ['ethereum', 'settlement', '0xa3', hash(3), 10], ['ethereum', 'vixp', '0xa4', hash(4), 20], ['optimism', 'vixp', '0xa2', hash(2), 10],
        ]);
      });
    });

    test('account transfers of a transaction: those still submitted are listed for recovery by key, token, account and nonce; once it is mined, those left submitted are the sweep\'s', async () => {
      await withJournal(async ({ store, journal, sign }) => {
        const accountKey = (account: string, nonce: number) => `ethereum:account:${account}:0x${nonce.toString(16).padStart(64, '0')}`;
        const accountRow = (account: string, nonce: number, status: AuthorizationStatus) => ({
          ...authorization(accountKey(account, nonce), status), from_address: account, chain_nonce: `0x${nonce.toString(16).padStart(64, '0')}`, created_at: nonce,
        });
        await store.db.insertInto('authorizations').values([
          accountRow('0xa1', 0, 'reserved'), accountRow('0xa1', 1, 'reserved'), accountRow('0xa2', 0, 'reserved'),
          // An EIP-3009 authorization in the same batch kind of row: never an account transfer.
          authorization('0x' + '33'.repeat(32), 'reserved'),
        ]).execute();
        await journal.syncNonce('ethereum', laneA, 0);
        const entry = (keys: string[]) => ({ ...plain(), intent: { kind: 'settlement' }, authorizationNonces: keys });
        const first = await journal.journal(entry([accountKey('0xa1', 0), accountKey('0xa2', 0), '0x' + '33'.repeat(32)]), 10, sign);
        const second = await journal.journal(entry([accountKey('0xa1', 1)]), 11, sign);
        assert.ok(first !== 'released' && second !== 'released');
        const listed = (await journal.accountTransfersOf(first.txHash)).sort((a, b) => a.key.localeCompare(b.key));
        assert.deepEqual(listed, [
          { key: accountKey('0xa1', 0), token: '0xc0', from: '0xa1', nonce: `0x${'0'.repeat(64)}` },
          { key: accountKey('0xa2', 0), token: '0xc0', from: '0xa2', nonce: `0x${'0'.repeat(64)}` },
        ]);
        assert.deepEqual(await journal.accountTransfersOf(hash(99)), []);

        const authorizationRepo = createAuthorizationRepository(store.db, factory.name === 'sqlite' ? 'process' : 'row');
        assert.deepEqual(await authorizationRepo.listAccountTransfersMined('ethereum'), [], 'nothing mined yet');
        // The first mined: recovery marks one of its account transfers used, the other stays submitted for the sweep.
        await journal.markMined(first.id, 'confirmed', { blockNumber: 5 }, 20);
        await journal.markAuthorizationsUsed(first.txHash, [accountKey('0xa1', 0)], 21);
        assert.deepEqual((await journal.accountTransfersOf(first.txHash)).map((row) => row.key).sort(), [accountKey('0xa1', 0), accountKey('0xa2', 0)], 'used ones too');
        await store.db.updateTable('authorizations').set({ status: 'canceled' }).where('nonce', '=', accountKey('0xa2', 0)).execute();
        assert.deepEqual((await journal.accountTransfersOf(first.txHash)).map((row) => row.key), [accountKey('0xa1', 0)], 'not an ended one');
        await store.db.updateTable('authorizations').set({ status: 'submitted' }).where('nonce', '=', accountKey('0xa2', 0)).execute();
        assert.deepEqual((await authorizationRepo.listAccountTransfersMined('ethereum')).map((row) => row.nonce), [accountKey('0xa2', 0)]);
        assert.deepEqual(await authorizationRepo.listAccountTransfersMined('optimism'), []);
        // The second mined and reverted: its transfer is the sweep's too, in the order reserved.
        await journal.markMined(second.id, 'failed', { blockNumber: 6 }, 30);
        assert.deepEqual((await authorizationRepo.listAccountTransfersMined('ethereum')).map((row) => row.nonce), [accountKey('0xa2', 0), accountKey('0xa1', 1)]);
      });
    });
  });
}
