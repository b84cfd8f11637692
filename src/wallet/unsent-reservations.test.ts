import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import type { Hex } from 'viem';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createAuthorizationRepository, type AuthorizationRepository } from '../store/authorization-repository.ts';
import { releaseUnsent, retryUnsent } from './unsent-reservations.ts';

// Reservations never sent (the relayer could not journal them: the disk was full) and not undone yet
// for the same reason, on a real SQLite store: each is undone (its funds free, its temp key usable
// again) at the next chance once the store can write, and only once.

let store: Store;
let dispose: () => Promise<void>;
before(async () => {
  ({ store, dispose } = await storeFactories.find((factory) => factory.name === 'sqlite')!.open());
  await store.db.insertInto('accounts').values({ address: holder, private_key_enc: 'x', secret_key_enc: 'x', created_at: 0 }).execute();
});
after(async () => { await dispose?.(); });

const holder = '0x00000000000000000000000000000000000000cc';

/** The real repository over the store, whose writes fail while `full`; `releases` counts its release calls. */
function repository() {
  const real = createAuthorizationRepository(store.db, 'process');
  const disk = { full: false, releases: 0 };
  const authorizations: AuthorizationRepository = {
    ...real,
    release: async (...args) => {
      disk.releases++;
      if (disk.full) throw new DomainError('store.full', 'the disk is full');
      return real.release(...args);
    },
  };
  return { authorizations, disk };
}

/** A reservation as authorizeTransfer makes one, its temp key used up in it: its nonce and the key's hash. */
async function reservation(authorizations: AuthorizationRepository): Promise<{ nonce: string; keyHash: string }> {
  const keyHash = randomBytes(32).toString('hex');
  await store.db.insertInto('temp_keys').values({ key_hash: keyHash, address: holder, key_type: 'transfer', expires_at: Date.now() + 60_000, used_at: null, created_at: Date.now() }).execute();
  const nonce = `0x${keyHash}`;
  const outcome = await authorizations.reserve({
    nonce, network: 'ethereum', reference: `test:${keyHash}`, contractAddress: '0x00000000000000000000000000000000000000aa', fromAddress: holder,
    toAddress: holder, value: '5', validBefore: 2_000_000_000, fromBlock: 1, createdAt: Date.now(), updatedAt: Date.now(),
  }, { consumeTempKey: keyHash, balance: async () => 10n ** 18n });
  assert.equal(outcome, 'reserved');
  return { nonce, keyHash };
}

const rowOf = async (nonce: string) => (await store.db.selectFrom('authorizations').select('status').where('nonce', '=', nonce as Hex).executeTakeFirst())?.status;
const usedAt = async (keyHash: string) => (await store.db.selectFrom('temp_keys').select('used_at').where('key_hash', '=', keyHash).executeTakeFirstOrThrow()).used_at;

describe('releaseUnsent', () => {
  test('undoes the reservation at once when the store can write: deleted, its temp key usable again; nothing left to retry', async () => {
    const { authorizations, disk } = repository();
    const r = await reservation(authorizations);
    assert.equal(await releaseUnsent(authorizations, r.nonce, r.keyHash), true);
    assert.equal(await rowOf(r.nonce), undefined);
    assert.equal(await usedAt(r.keyHash), null);
    await retryUnsent(authorizations);
    assert.equal(disk.releases, 1, 'nothing remembered');
  });

  test('without a temp key: the reservation alone is undone', async () => {
    const { authorizations } = repository();
    const r = await reservation(authorizations);
    assert.equal(await releaseUnsent(authorizations, r.nonce), true);
    assert.equal(await rowOf(r.nonce), undefined);
    assert.notEqual(await usedAt(r.keyHash), null, 'the key it did not name stays spent');
  });

  test('a store that cannot write: false, the reservation kept and remembered; retryUnsent fails while it is full, then undoes it once', async () => {
    const { authorizations, disk } = repository();
    const r = await reservation(authorizations);
    disk.full = true;
    assert.equal(await releaseUnsent(authorizations, r.nonce, r.keyHash), false);
    assert.equal(await rowOf(r.nonce), 'reserved');
    await assert.rejects(retryUnsent(authorizations, r.nonce), (error: unknown) => error instanceof DomainError && error.code === 'store.full');
    assert.equal(await rowOf(r.nonce), 'reserved');
    disk.full = false;
    await retryUnsent(authorizations, r.nonce);
    assert.equal(await rowOf(r.nonce), undefined);
    assert.equal(await usedAt(r.keyHash), null, 'its temp key is usable again');
    const releases = disk.releases;
    await retryUnsent(authorizations, r.nonce);
    await retryUnsent(authorizations);
    assert.equal(disk.releases, releases, 'undone: forgotten');
  });

  test('a release that works later forgets what an earlier failure remembered', async () => {
    const { authorizations, disk } = repository();
    const r = await reservation(authorizations);
    disk.full = true;
    assert.equal(await releaseUnsent(authorizations, r.nonce, r.keyHash), false);
    disk.full = false;
    assert.equal(await releaseUnsent(authorizations, r.nonce, r.keyHash), true);
    const releases = disk.releases;
    await retryUnsent(authorizations);
    assert.equal(disk.releases, releases);
  });
});

describe('retryUnsent', () => {
  test('with a nonce: that reservation only; without: every one left; each repository its own', async () => {
    const { authorizations, disk } = repository();
    const other = repository();
    const [a, b, c] = [await reservation(authorizations), await reservation(authorizations), await reservation(other.authorizations)];
    disk.full = true;
    other.disk.full = true;
    assert.equal(await releaseUnsent(authorizations, a.nonce, a.keyHash), false);
    assert.equal(await releaseUnsent(authorizations, b.nonce, b.keyHash), false);
    assert.equal(await releaseUnsent(other.authorizations, c.nonce, c.keyHash), false);
    disk.full = false;
    other.disk.full = false;
    await retryUnsent(authorizations, b.nonce);
    assert.deepEqual([await rowOf(a.nonce), await rowOf(b.nonce)], ['reserved', undefined]);
    await retryUnsent(authorizations, `0x${'ab'.repeat(32)}`);
    assert.equal(await rowOf(a.nonce), 'reserved', 'another nonce leaves it');
    await retryUnsent(authorizations);
    assert.equal(await rowOf(a.nonce), undefined);
    assert.equal(await usedAt(a.keyHash), null);
    assert.equal(await rowOf(c.nonce), 'reserved', 'another repository\'s is its own');
    await retryUnsent(other.authorizations);
    assert.equal(await rowOf(c.nonce), undefined);
  });

  test('nothing ever remembered for a repository: resolves without touching the store', async () => {
    const { authorizations, disk } = repository();
    disk.full = true;
    await retryUnsent(authorizations);
    await retryUnsent(authorizations, `0x${'cd'.repeat(32)}`);
    assert.equal(disk.releases, 0);
  });
});
