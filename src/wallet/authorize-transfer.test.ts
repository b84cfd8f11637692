import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import { DomainError } from '#shared/errors.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { authorizeTransfer } from './authorize-transfer.ts';
import { retryUnsent } from './unsent-reservations.ts';
import type { AuthorizationRepository } from '../store/authorization-repository.ts';

// What happens to a transfer's authorization when the relayer fails, on the real store (SQLite and
// PostgreSQL) with a stand-in chain and relayer: the real chain's paths are in test/money-safety.test.ts.
// Only a failure before journaling (a domain error of the relayer) may void the authorization; any
// other failure may come after the broadcast, so the authorization must stay open and hold its funds.
for (const factory of storeFactories) {
  describe(`authorizeTransfer on ${factory.name}, when the relayer fails`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    before(async () => ({ store, dispose } = await factory.open()));
    after(async () => { await dispose?.(); });

    const vault = createKeyVault(randomBytes(32));
    const holder = privateKeyToAccount(generatePrivateKey());
    const token = { contractAddress: '0x00000000000000000000000000000000000000aa' as Address, symbol: 'VIXP', name: 'VIXP', version: '1', decimals: 18, eip3009: true };

    async function attempt(failure: Error, options: { tempKeyHash?: string; authorizations?: AuthorizationRepository; thrown?: RegExp } = {}) {
      await store.db.insertInto('accounts').values({ address: holder.address, private_key_enc: 'x', secret_key_enc: 'x', created_at: 0 })
        .onConflict((oc) => oc.column('address').doNothing()).execute();
      const relayer = { settle: async () => { throw failure; } } as unknown as Relayer;
      const deps = {
        contracts: { ethereum: { settlement: '0x00000000000000000000000000000000000000bb' } },
        chains: { ethereum: { chainId: 31337, blocks: { recentHead: () => undefined }, client: { getBlockNumber: async () => 1n, readContract: async () => 10n ** 20n } } },
        authorizations: options.authorizations ?? createAuthorizationRepository(store.db), relayer, vault, clock: () => Date.now(), authorizationTtlSeconds: 120,
        eip7702: { ethereum: false },
      } as unknown as WalletDeps;
      const reference = `test:${randomBytes(8).toString('hex')}`;
      await assert.rejects(authorizeTransfer(deps, 'ethereum', {
        token, from: holder.address, to: holder.address, value: 5n, reference, privateKeyEnc: vault.encrypt(generatePrivateKey()),
        ...(options.tempKeyHash !== undefined && { tempKeyHash: options.tempKeyHash }),
      }), options.thrown ?? failure);
      const record = await store.db.selectFrom('authorizations').select(['nonce', 'status']).where('network', '=', 'ethereum').where('reference', '=', reference).executeTakeFirst();
      return { nonce: record?.nonce, record: record && { status: record.status } };
    }

    /** A temp key of the holder, unused: its hash. */
    async function tempKey(): Promise<string> {
      const keyHash = randomBytes(32).toString('hex');
      await store.db.insertInto('temp_keys').values({ key_hash: keyHash, address: holder.address, key_type: 'transfer', expires_at: Date.now() + 60_000, used_at: null, created_at: Date.now() }).execute();
      return keyHash;
    }
    const usedAt = async (keyHash: string) => (await store.db.selectFrom('temp_keys').select('used_at').where('key_hash', '=', keyHash).executeTakeFirstOrThrow()).used_at;
    const storeFull = () => new DomainError('store.full', 'the disk is full');

    test('a full disk before journaling undoes the reservation and gives its temp key back: nothing was sent', async () => {
      const keyHash = await tempKey();
      const { record } = await attempt(storeFull(), { tempKeyHash: keyHash });
      assert.equal(record, undefined, 'no authorization is left reserved');
      assert.equal(await usedAt(keyHash), null, 'the temp key is usable again');
    });

    test('a disk still too full to undo it: undone at the next try once there is room', async () => {
      const keyHash = await tempKey();
      const real = createAuthorizationRepository(store.db);
      let full = true;
      const authorizations: AuthorizationRepository = { ...real, release: async (...args) => { if (full) throw storeFull(); return real.release(...args); } };
      const { nonce, record } = await attempt(storeFull(), { tempKeyHash: keyHash, authorizations });
      assert.equal(record?.status, 'reserved', 'still reserved while the disk is full');
      assert.notEqual(await usedAt(keyHash), null);
      await assert.rejects(retryUnsent(authorizations, nonce), /disk is full/);
      full = false;
      await retryUnsent(authorizations, nonce);
      assert.equal(await store.db.selectFrom('authorizations').select('status').where('nonce', '=', nonce as Hex).executeTakeFirst(), undefined);
      assert.equal(await usedAt(keyHash), null, 'the temp key is usable again');
    });

    test('a key custody that cannot sign the batch (custody.unavailable) undoes the reservation and gives its temp key back', async () => {
      const keyHash = await tempKey();
      const { record } = await attempt(new DomainError('custody.unavailable', 'the HSM is not reachable'), { tempKeyHash: keyHash });
      assert.equal(record, undefined);
      assert.equal(await usedAt(keyHash), null);
    });

    test('a refusal before journaling on a disk too full to void it: store.full, the reservation undone and its temp key given back', async () => {
      const keyHash = await tempKey();
      const real = createAuthorizationRepository(store.db);
      const authorizations: AuthorizationRepository = { ...real, finish: async () => { throw storeFull(); } };
      const refused = new DomainError('chain.transaction_failed', 'would revert');
      const { record } = await attempt(refused, { tempKeyHash: keyHash, authorizations, thrown: /disk is full/ });
      assert.equal(record, undefined);
      assert.equal(await usedAt(keyHash), null);
    });

    test('a refusal before journaling whose voiding fails otherwise: that failure, the reservation left to the expiry sweep, its temp key spent', async () => {
      const keyHash = await tempKey();
      const real = createAuthorizationRepository(store.db);
      const authorizations: AuthorizationRepository = { ...real, finish: async () => { throw new DomainError('store.unavailable', 'connection lost'); } };
      const { record } = await attempt(new DomainError('chain.transaction_failed', 'would revert'), { tempKeyHash: keyHash, authorizations, thrown: /connection lost/ });
      assert.equal(record?.status, 'reserved');
      assert.notEqual(await usedAt(keyHash), null);
    });

    test('a refusal before journaling voids it: nothing was sent', async () => {
      assert.equal((await attempt(new DomainError('chain.transaction_failed', 'would revert'))).record?.status, 'void');
    });

    test('an unexpected failure (possibly after the broadcast) leaves it open, holding its funds', async () => {
      assert.equal((await attempt(new Error('database connection lost'))).record?.status, 'reserved');
    });
  });
}
