import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Address, Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { storeFactories } from '../../test/support/stores.ts';
import type { Store } from '../store/db.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { createKeyVault } from '../shared/key-vault.ts';
import { DomainError } from '../shared/errors.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { authorizationNonce, authorizeTransfer } from './authorize-transfer.ts';

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
    const token = { contractAddress: '0x00000000000000000000000000000000000000aa' as Address, symbol: 'VIXP', name: 'VIXP', decimals: 18 };

    async function attempt(failure: Error) {
      await store.db.insertInto('accounts').values({ address: holder.address, private_key_enc: 'x', secret_key_enc: 'x', created_at: 0 })
        .onConflict((oc) => oc.column('address').doNothing()).execute();
      const relayer = { settle: async () => { throw failure; } } as unknown as Relayer;
      const deps = {
        contracts: { ethereum: { settlement: '0x00000000000000000000000000000000000000bb' } },
        chains: { ethereum: { chainId: 31337, client: { getBlockNumber: async () => 1n, readContract: async () => 10n ** 20n } } },
        authorizations: createAuthorizationRepository(store.db), relayer, vault, clock: () => Date.now(), authorizationTtlSeconds: 120,
      } as unknown as WalletDeps;
      const reference = `test:${randomBytes(8).toString('hex')}`;
      await assert.rejects(authorizeTransfer(deps, 'ethereum', {
        token, from: holder.address, to: holder.address, value: 5n, reference, privateKeyEnc: vault.encrypt(generatePrivateKey()),
      }), failure);
      return store.db.selectFrom('authorizations').select('status').where('nonce', '=', authorizationNonce('ethereum', reference) as Hex)
        .executeTakeFirstOrThrow();
    }

    test('a refusal before journaling voids it: nothing was sent', async () => {
      assert.equal((await attempt(new DomainError('chain.transaction_failed', 'would revert'))).status, 'void');
    });

    test('an unexpected failure (possibly after the broadcast) leaves it open, holding its funds', async () => {
      assert.equal((await attempt(new Error('database connection lost'))).status, 'reserved');
    });
  });
}
