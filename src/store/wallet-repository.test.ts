import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import { createWalletRepository, type WalletRepository } from './wallet-repository.ts';
import { createChainJournal } from './chain-journal-repository.ts';
import { createSettlementTokenRepository } from './settlement-token-repository.ts';
import type { Store } from './db.ts';

for (const factory of storeFactories) {
  describe(`wallet repository on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let repo: WalletRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      repo = createWalletRepository(store.db);
    });
    after(async () => { await dispose?.(); });

    test('an account is stored once; a second insert of the same address changes nothing', async () => {
      const account = { address: '0x0000000000000000000000000000000000000A11', privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' };
      assert.equal(await repo.insertAccount(account, 1), true);
      assert.equal(await repo.insertAccount({ ...account, secretKeyEnc: 'v1:other' }, 2), false);
      assert.deepEqual(await repo.findAccount(account.address), account);
      assert.equal(await repo.findAccount('0x0000000000000000000000000000000000000B0B'), undefined);
    });

    test('a temp key is consumed once, and never after it expires', async () => {
      await repo.insertAccount({ address: '0xA', privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
      assert.equal(await repo.insertTempKeyForAccount({ keyHash: 'k1', address: '0xA', keyType: 'transfer', expiresAt: 1_000 }, 0), true);
      assert.equal(await repo.insertTempKeyForAccount({ keyHash: 'k2', address: '0xA', keyType: 'transfer', expiresAt: 1_000 }, 0), true);
      const consume = (hash: string, now: number) => repo.consumeTempKey(hash, now);
      const outcomes = await Promise.all([consume('k1', 500), consume('k1', 500), consume('k1', 500)]);
      assert.deepEqual(outcomes.filter(Boolean).length, 1);
      assert.equal((await repo.findTempKey('k1'))?.usedAt, 500);
      assert.equal(await consume('k2', 1_000), false, 'expired');
      assert.equal(await consume('missing', 0), false);
    });

    test('a temp key for an account is stored in one statement; none for an address without an account', async () => {
      const account = { address: '0x0000000000000000000000000000000000000A12', privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' };
      await repo.insertAccount(account, 1);
      assert.equal(await repo.insertTempKeyForAccount({ keyHash: 'k3', address: account.address, keyType: 'createToken', expiresAt: 1_700_000_000_000 }, 7), true);
      assert.deepEqual(await repo.findTempKey('k3'), { keyHash: 'k3', address: account.address, keyType: 'createToken', expiresAt: 1_700_000_000_000, usedAt: null });
      assert.equal(await repo.consumeTempKey('k3', 8), true);
      assert.equal(await repo.insertTempKeyForAccount({ keyHash: 'k4', address: '0x0000000000000000000000000000000000000B0C', keyType: 'transfer', expiresAt: 1_000 }, 0), false);
      assert.equal(await repo.findTempKey('k4'), undefined);
    });

    test('relayer nonces are handed out without gaps or repeats under concurrency, each with its journal row', async () => {
      const journal = createChainJournal(store.db, randomUUID);
      await journal.syncNonce('ethereum', '0xR', 7);
      await journal.syncNonce('ethereum', '0xR', 3);
      const take = (i: number) => journal.journal({ network: 'ethereum', relayer: '0xR', intent: { kind: 'test' } }, i,
        async (nonce) => ({ rawTx: `0xraw${nonce}`, txHash: `0xhash${nonce}` }));
      const journaled = await Promise.all(Array.from({ length: 25 }, (_, i) => take(i)));
      const nonces = (await journal.listUnmined('ethereum', '0xR')).map((tx) => tx.nonce);
      assert.deepEqual(nonces, Array.from({ length: 25 }, (_, i) => 7 + i));
      assert.equal(new Set(journaled.map((j) => (j === 'released' ? '' : j.txHash))).size, 25);
      assert.equal(await journal.reopenFrom('ethereum', '0xR', 30, 99), 0, 'nothing mined yet, so nothing to reopen');
    });

    test('tokens are found by address and by symbol', async () => {
      const token = { network: 'bnb', contract_address: '0xT', symbol: 'ABC', name: 'Abc', decimals: 18, owner: '0xO', created_at: 5 };
      await repo.insertToken(token);
      await repo.insertToken(token);
      assert.deepEqual({ ...(await repo.findToken('bnb', '0xT')) }, token);
      assert.deepEqual({ ...(await repo.findTokenBySymbol('bnb', 'ABC')) }, token);
      assert.equal(await repo.findToken('ethereum', '0xT'), undefined);
    });

    test('an allowed token is found on its own transfer path only, on its network only', async () => {
      const allowList = createSettlementTokenRepository(store.db);
      await allowList.allow({ network: 'bnb', contractAddress: '0xE9', symbol: 'USDX', name: 'USD X', decimals: 6, eip712Version: '2', allowedAt: 1 });
      await allowList.allow({ network: 'bnb', contractAddress: '0xAC', symbol: 'USDT', name: 'Tether USD', decimals: 18, eip712Version: null, transferPath: 'account', allowedAt: 1 });
      assert.deepEqual(await repo.findAllowedEip3009Token('bnb', '0xE9'), { symbol: 'USDX', name: 'USD X', version: '2', decimals: 6 });
      assert.deepEqual(await repo.findAllowedAccountToken('bnb', '0xAC'), { symbol: 'USDT', name: 'Tether USD', decimals: 18 });
      assert.equal(await repo.findAllowedEip3009Token('bnb', '0xAC'), undefined, 'an account-path token has no EIP-3009 path');
      assert.equal(await repo.findAllowedAccountToken('bnb', '0xE9'), undefined, 'an EIP-3009 token is not an account-path one');
      assert.equal(await repo.findAllowedEip3009Token('opbnb', '0xE9'), undefined, 'allowed on bnb, not on opbnb');
      assert.equal(await repo.findAllowedAccountToken('opbnb', '0xAC'), undefined);
    });
  });
}
