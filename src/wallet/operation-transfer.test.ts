import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createAuthorizationRepository, type AuthorizationRepository } from '../store/authorization-repository.ts';
import { attemptTransfer, operationTransfer } from './operation-transfer.ts';

// The transfer of an operation as a stale sweep reads it, on a real SQLite store and the real
// authorization repository: none signed, its reference is taken by a `void` row first, so a run
// still alive can never reserve it after and the sweep's `void` stays true.

let store: Store;
let dispose: () => Promise<void>;
let authorizations: AuthorizationRepository;
before(async () => {
  ({ store, dispose } = await storeFactories.find((factory) => factory.name === 'sqlite')!.open());
  authorizations = createAuthorizationRepository(store.db, 'process');
});
after(async () => { await dispose?.(); });

const from = '0x00000000000000000000000000000000000000cc';
let n = 0;
/** Reserves a transfer under `reference`, as a run does: the answer of the reservation. */
const reserve = (reference: string, createdAt = 1_000) => {
  const nonce = `0x${(++n).toString(16).padStart(64, '0')}`;
  return authorizations.reserve({
    nonce, chainNonce: nonce, network: 'ethereum', reference, contractAddress: '0xC', fromAddress: from, toAddress: '0xTo', value: '5',
    validBefore: 10_000, fromBlock: 1, createdAt, updatedAt: createdAt,
  }, { balance: async () => 100n });
};
const statusesOf = async (prefix: string) => (await store.db.selectFrom('authorizations').select(['reference', 'status']).where('reference', 'like', `${prefix}%`)
  .orderBy('reference').execute()).map((row) => [row.reference, row.status]);

describe('an operation\'s transfer read by the sweep that decides the operation', () => {
  test('none signed: voided (answered undefined), then read as the void row; a reservation under it after is refused', async () => {
    const reference = `payment-cancel:${randomUUID()}`;
    assert.equal(await operationTransfer(authorizations, 'ethereum', reference, 2_000), undefined);
    assert.deepEqual(await statusesOf(reference), [[reference, 'void']]);
    assert.equal(await reserve(reference), 'duplicate');
    const again = await operationTransfer(authorizations, 'ethereum', reference, 3_000);
    assert.deepEqual([again?.status, again?.createdAt], ['void', 2_000], 'the same void row');
  });

  test('one signed: its own record, nothing voided', async () => {
    const reference = `payment-cancel:${randomUUID()}`;
    assert.equal(await reserve(reference), 'reserved');
    const found = await operationTransfer(authorizations, 'ethereum', reference, 2_000);
    assert.deepEqual([found?.reference, found?.status, found?.value], [reference, 'reserved', '5']);
    assert.deepEqual(await statusesOf(reference), [[reference, 'reserved']]);
  });

  test('reserved between the read and the void: the run\'s record is answered, not voided', async () => {
    const reference = `payment-cancel:${randomUUID()}`;
    const raced: AuthorizationRepository = {
      ...authorizations,
      findByReference: async (...args) => {
        const found = await authorizations.findByReference(...args);
        // The first read misses; the run reserves right after it.
        if (!found && (await statusesOf(reference)).length === 0) await reserve(reference);
        return found;
      },
    };
    const found = await operationTransfer(raced, 'ethereum', reference, 2_000);
    assert.deepEqual([found?.reference, found?.status], [reference, 'reserved']);
    assert.deepEqual(await statusesOf(reference), [[reference, 'reserved']]);
  });

  test('an attempt: its own transfer; none signed, its reference voided, an earlier attempt\'s ended transfer notwithstanding', async () => {
    const first = `reward:${randomUUID().replace(/-/g, '')}:`;
    assert.equal(await attemptTransfer(authorizations, 'ethereum', { prefix: first, reference: `${first}500` }, 600), undefined, 'the first attempt, none signed');
    assert.deepEqual(await statusesOf(first), [[`${first}500`, 'void']]);
    const prefix = `reward:${randomUUID().replace(/-/g, '')}:`;
    assert.equal(await reserve(`${prefix}1000`), 'reserved');
    const own = await attemptTransfer(authorizations, 'ethereum', { prefix, reference: `${prefix}1000` }, 5_000);
    assert.deepEqual([own?.reference, own?.status], [`${prefix}1000`, 'reserved']);
    await authorizations.finish(own!.nonce, 'canceled', {}, 1_500);
    // The next attempt, begun at 2000, has signed nothing yet: the earlier one's cancelled transfer is not its.
    assert.equal(await attemptTransfer(authorizations, 'ethereum', { prefix, reference: `${prefix}2000` }, 5_000), undefined);
    assert.deepEqual(await statusesOf(prefix), [[`${prefix}1000`, 'canceled'], [`${prefix}2000`, 'void']]);
    assert.equal(await reserve(`${prefix}2000`), 'duplicate');
  });

  test('an attempt an earlier version named by a random id: its transfer while it may execute or once executed; an ended one is not taken for it', async () => {
    for (const [status, taken] of [['reserved', true], ['submitted', true], ['used', true], ['canceled', false], ['expired', false], ['void', false]] as const) {
      const prefix = `reward:${randomUUID().replace(/-/g, '')}:`;
      const legacy = `${prefix}${randomUUID()}`;
      assert.equal(await reserve(legacy), 'reserved');
      await store.db.updateTable('authorizations').set({ status }).where('reference', '=', legacy).execute();
      const found = await attemptTransfer(authorizations, 'ethereum', { prefix, reference: `${prefix}3000` }, 5_000);
      assert.equal(found?.reference, taken ? legacy : undefined, status);
      assert.deepEqual(await statusesOf(`${prefix}3000`), taken ? [] : [[`${prefix}3000`, 'void']], status);
    }
    // A hyphen in the operation's own id is not a random attempt id: only what follows the prefix counts.
    const prefix = `reward-cancel:${randomUUID()}:`;
    assert.equal(await reserve(`${prefix}1000`), 'reserved');
    await store.db.updateTable('authorizations').set({ status: 'submitted' }).where('reference', '=', `${prefix}1000`).execute();
    assert.equal(await attemptTransfer(authorizations, 'ethereum', { prefix, reference: `${prefix}2000` }, 5_000), undefined);
  });
});
