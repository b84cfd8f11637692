import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import { createAuthorizationRepository, type AuthorizationRecord, type AuthorizationRepository } from './authorization-repository.ts';
import { createWalletRepository, type WalletRepository } from './wallet-repository.ts';
import { sql } from 'kysely';
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
      const balance = async () => 10n;
      const late = authorization(from, 1n, 1_000);
      assert.equal(await authorizations.reserve(late, { consumeTempKey: `k-${from}`, balance }), 'temp_key_used', 'expired at its expiry time');
      assert.equal(await authorizations.find(late.nonce), undefined);
      assert.equal((await wallet.findTempKey(`k-${from}`))?.usedAt, null, 'the expired key was not spent');
      const live = authorization(from, 1n, 999);
      assert.equal(await authorizations.reserve(live, { consumeTempKey: `k-${from}`, balance }), 'reserved');
      assert.equal((await authorizations.find(live.nonce))?.status, 'reserved');
      assert.equal(await authorizations.reserve(authorization(from, 1n, 999), { consumeTempKey: `k-${from}`, balance }), 'temp_key_used', 'spent once');
    });

    test('12 concurrent reservations of 1 from an account holding 3: exactly 3 are reserved, the rest refused', async () => {
      const from = await newAccount();
      // The balance is a call to the node, here a pause.
      const balance = async () => {
        await sleep(50);
        return 3n;
      };
      // Every connection of the pool open first, so the reservations do meet.
      await Promise.all(Array.from({ length: 12 }, () => authorizations.find('0x0')));
      const outcomes = await Promise.all(Array.from({ length: 12 }, () => authorizations.reserve(authorization(from, 1n, 1), { balance })));
      assert.equal(outcomes.filter((o) => o === 'reserved').length, 3, outcomes.join(','));
      assert.equal(outcomes.filter((o) => o === 'insufficient').length, 9, outcomes.join(','));
      const held = await store.db.selectFrom('authorizations').select('value').where('from_address', '=', from).where('status', '=', 'reserved').execute();
      assert.equal(held.length, 3);
    });

    test('a node that does not answer holds no connection, no transaction and no lock: 30 reservations wait on it while the store serves everything else', async () => {
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => { answer = resolve; });
      let asked = 0;
      const balance = async () => { asked++; await answered; return 5n; };
      const from = await newAccount();
      const others = await Promise.all(Array.from({ length: 29 }, () => newAccount()));
      const waiting = [from, ...others].map((account) => authorizations.reserve(authorization(account, 1n, 1), { balance }));
      while (asked < 30) await sleep(5);
      // More than the pool holds, all waiting on the node: reads, writes and another account's
      // reservation (with a node that answers) go through meanwhile.
      const fresh = await newAccount();
      assert.equal(await authorizations.reserve(authorization(fresh, 1n, 1), { balance: async () => 1n }), 'reserved');
      assert.equal((await authorizations.held({ network: 'ethereum', contractAddress: '0xC', fromAddress: fresh })), 1n);
      if (factory.name === 'postgres') {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where state like 'idle in transaction%' and application_name = current_setting('application_name')`.execute(store.db);
        assert.equal(rows[0]!.n, 0, 'no connection sits in a transaction while the node is asked');
      }
      answer();
      assert.deepEqual(await Promise.all(waiting), waiting.map(() => 'reserved'));
    });

    test('a spend used up after the balance was read still counts as held: a balance that does not show it yet is not spent twice', async () => {
      const from = await newAccount();
      const first = authorization(from, 3n, 1_000);
      assert.equal(await authorizations.reserve(first, { balance: async () => 5n }), 'reserved');
      // The node's balance is read (still 5), then the first transfer is mined and marked used
      // before the second reservation takes the account's lock.
      let read!: () => void;
      const wasRead = new Promise<void>((resolve) => { read = resolve; });
      let proceed!: () => void;
      const mayProceed = new Promise<void>((resolve) => { proceed = resolve; });
      const second = authorizations.reserve(authorization(from, 3n, 2_000), { balance: async () => { read(); await mayProceed; return 5n; } });
      await wasRead;
      assert.equal(await authorizations.finish(first.nonce, 'used', { txHash: '0x1' }, 2_500), true);
      proceed();
      assert.equal(await second, 'insufficient', '5 read before 3 were spent covers 2 more, not 3');
      // A spend well before the read shows in the balance: not counted again.
      assert.equal(await authorizations.reserve(authorization(from, 2n, 10_000), { balance: async () => 2n }), 'reserved');
    });
    test('a spend used up just before the balance was read shows in it and is not counted twice: two refunds in a row from an account holding exactly both', async () => {
      const from = await newAccount();
      const first = authorization(from, 7n, 30_000);
      assert.equal(await authorizations.reserve(first, { balance: async () => 12n }), 'reserved');
      assert.equal(await authorizations.finish(first.nonce, 'used', { txHash: '0x7' }, 30_400), true);
      // Read 100 ms after the first was marked used: the node's balance (5) already has it.
      assert.equal(await authorizations.reserve(authorization(from, 5n, 30_500), { balance: async () => 5n }), 'reserved');
    });
  });
}
