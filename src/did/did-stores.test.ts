import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { storeFactories } from '../../test/support/store-factories.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import type { Store } from '../store/db.ts';
import { createDidAgent, type DidAgent } from './did-agent.ts';
import { createVeramoStores } from '../store/veramo-stores.ts';
import { createDidRepository, type DidRepository } from '../store/did-repository.ts';
import { ensureSystemDids, importEthrDid } from './did-identifiers.ts';

// The Veramo stores and our DID tables on both dialects. No chain is needed: nothing here resolves.
const chain = { rpcUrl: 'http://127.0.0.1:1', chainId: 31337, registry: '0x0000000000000000000000000000000000000001' };

for (const factory of storeFactories) {
  describe(`DID stores on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let agent: DidAgent;
    let repository: DidRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      agent = createDidAgent({ stores: createVeramoStores(store.db, createKeyVault(randomBytes(32)), () => 1_000), chain });
      repository = createDidRepository(store.db);
    });
    after(async () => { await dispose?.(); });

    test('an imported key signs, is sealed at rest, and importing it again changes nothing', async () => {
      const privateKey = generatePrivateKey();
      const first = await importEthrDid(agent, privateKey, 'first');
      const again = await importEthrDid(agent, privateKey, 'second');
      assert.deepEqual(again, first);
      assert.equal(first.did, `did:ethr:${privateKeyToAccount(privateKey).address}`);
      assert.equal(first.alias, 'first');
      assert.equal(first.keys[0]!.kid, first.controllerKeyId);
      assert.equal((await agent.didManagerFind({ alias: 'first' })).length, 1);
      const signature = await agent.keyManagerSign({ keyRef: first.controllerKeyId!, data: 'hello', algorithm: 'ES256K' });
      assert.match(signature, /^[A-Za-z0-9_-]{86}$/);

      const rows = await store.db.selectFrom('did_private_keys').selectAll().execute();
      assert.ok(rows.length > 0);
      for (const row of rows) {
        assert.match(row.private_key_enc, /^v1:/);
        assert.ok(!row.private_key_enc.includes(privateKey.slice(2)));
      }
      assert.ok(!JSON.stringify(await store.db.selectFrom('did_keys').selectAll().execute()).includes(privateKey.slice(2)));
    });

    test('another private key under a taken kid is refused', async () => {
      const privateKey = generatePrivateKey();
      const identifier = await importEthrDid(agent, privateKey, 'taken');
      await assert.rejects(
        agent.keyManagerImport({ kid: identifier.controllerKeyId!, kms: 'local', type: 'Secp256k1', privateKeyHex: generatePrivateKey().slice(2) }),
        /key_already_exists/,
      );
    });

    test('system DIDs are made once and listed by role', async () => {
      const first = await ensureSystemDids({ agent, repository });
      const second = await ensureSystemDids({ agent, repository });
      assert.deepEqual(second, first);
      assert.equal(first.issuer.length, 1);
      assert.equal(first.verifier.length, 1);
      assert.equal(first.issuer[0]!.alias, 'vixpay-issuer');
      assert.notEqual(first.issuer[0]!.did, first.verifier[0]!.did);
      assert.equal(await repository.exists(first.issuer[0]!.did), true);
      assert.equal(await repository.exists('did:ethr:0x000000000000000000000000000000000000dEaD'), false);
    });

    test('a presentation is marked used once, also when two arrive together; expired marks are removed', async () => {
      const entry = { jwtHash: 'h1', holderDid: 'did:ethr:0x1', expiresAt: 5_000 };
      const outcomes = await Promise.all([1, 2, 3].map(() => repository.markPresentationUsed(entry, 1_000)));
      assert.deepEqual(outcomes.sort(), [false, false, true]);
      await repository.deleteExpiredPresentations(4_000);
      assert.equal(await repository.markPresentationUsed(entry, 4_500), false);
      await repository.deleteExpiredPresentations(6_000);
      assert.equal(await repository.markPresentationUsed(entry, 6_000), true);
    });
  });
}
