import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/stores.ts';
import { createAuthorizationRepository, type AuthorizationRecord, type AuthorizationRepository } from './authorization-repository.ts';
import { createWalletRepository, type WalletRepository } from './wallet-repository.ts';
import type { Store } from './db.ts';

for (const factory of storeFactories) {
  describe(`authorization repository on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let wallet: WalletRepository;
    let authorizations: AuthorizationRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      wallet = createWalletRepository(store.db);
      // As the composition root builds it: the account's row lock on PostgreSQL, a lock of this process on SQLite.
      authorizations = createAuthorizationRepository(store.db, factory.name === 'sqlite' ? 'process' : 'row');
    });
    after(async () => { await dispose?.(); });

    let accounts = 0;
    const newAccount = async () => {
      const address = `0x${(++accounts).toString(16).padStart(40, 'a')}`;
      await wallet.insertAccount({ address, privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
      return address;
    };
    const authorization = (from: string, value: bigint, createdAt: number): Omit<AuthorizationRecord, 'status' | 'txHash' | 'cancelTxHash'> => {
      const id = randomUUID();
      return {
        nonce: `0x${id.replaceAll('-', '')}`, network: 'ethereum', reference: `transfer:${id}`, contractAddress: '0xC', fromAddress: from,
        toAddress: '0xB', value: value.toString(), validBefore: 10_000, fromBlock: 1, createdAt, updatedAt: createdAt,
      };
    };

    test('a reservation spending an expired temp key is refused and reserves nothing; a live one is spent once', async () => {
      const from = await newAccount();
      assert.equal(await wallet.insertTempKeyForAccount({ keyHash: `k-${from}`, address: from, keyType: 'transfer', expiresAt: 1_000 }, 0), true);
      const covers = async () => true;
      const late = authorization(from, 1n, 1_000);
      assert.equal(await authorizations.reserve(late, { consumeTempKey: `k-${from}`, covers }), 'temp_key_used', 'expired at its expiry time');
      assert.equal(await authorizations.find(late.nonce), undefined);
      assert.equal((await wallet.findTempKey(`k-${from}`))?.usedAt, null, 'the expired key was not spent');
      const live = authorization(from, 1n, 999);
      assert.equal(await authorizations.reserve(live, { consumeTempKey: `k-${from}`, covers }), 'reserved');
      assert.equal((await authorizations.find(live.nonce))?.status, 'reserved');
      assert.equal(await authorizations.reserve(authorization(from, 1n, 999), { consumeTempKey: `k-${from}`, covers }), 'temp_key_used', 'spent once');
    });

    test('12 concurrent reservations of 1 from an account covering 3: exactly 3 are reserved, the rest refused', async () => {
      const from = await newAccount();
      // What the wallet asks: the balance (a call to the node, here a pause) covers what is held plus this one.
      const covers = async (held: bigint) => {
        await sleep(50);
        return held + 1n <= 3n;
      };
      // Every connection of the pool open first, so the reservations do meet.
      await Promise.all(Array.from({ length: 12 }, () => authorizations.find('0x0')));
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => authorizations.reserve(authorization(from, 1n, 1), { covers })));
      assert.equal(outcomes.filter((o) => o === 'reserved').length, 3, outcomes.join(','));
      assert.equal(outcomes.filter((o) => o === 'insufficient').length, 9, outcomes.join(','));
      const held = await store.db.selectFrom('authorizations').select('value').where('from_address', '=', from).where('status', '=', 'reserved').execute();
      assert.equal(held.length, 3);
    });
  });
}
