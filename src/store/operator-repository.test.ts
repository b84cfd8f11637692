import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from './db.ts';
import { createOperatorRepository, type OperatorRepository } from './operator-repository.ts';

// The console's operators and their login sessions on a real SQLite store: a username taken once, a
// session valid until its expiry (an instant at `expiresAt` is past it), the sweep of expired ones.

const factory = storeFactories.find((f) => f.name === 'sqlite')!;
let store: Store;
let dispose: () => Promise<void>;
let operators: OperatorRepository;
before(async () => {
  ({ store, dispose } = await factory.open());
  operators = createOperatorRepository(store.db);
});
after(async () => { await dispose?.(); });

test('an operator is added once: the username taken answers false and keeps the first password', async () => {
  assert.equal(await operators.insertOperator({ username: 'ana', passwordHash: 'scrypt$1' }, 10), true);
  assert.equal(await operators.insertOperator({ username: 'ana', passwordHash: 'scrypt$2' }, 20), false);
  assert.equal(await operators.insertOperator({ username: 'bo', passwordHash: 'scrypt$3' }, 30), true);
  assert.equal(await operators.findPasswordHash('ana'), 'scrypt$1');
  assert.equal(await operators.findPasswordHash('bo'), 'scrypt$3');
  assert.equal(await operators.findPasswordHash('cy'), undefined);
  const row = await store.db.selectFrom('operators').selectAll().where('username', '=', 'ana').executeTakeFirstOrThrow();
  assert.equal(Number(row.created_at), 10);
});

test('a session is its operator\'s until its expiry: at expiresAt − 1 it is, at expiresAt it is not; deleted, it is nobody\'s', async () => {
  await operators.insertSession({ tokenHash: 'h-ana', username: 'ana', expiresAt: 5_000 }, 1_000);
  await operators.insertSession({ tokenHash: 'h-bo', username: 'bo', expiresAt: 9_000 }, 1_000);
  assert.equal(await operators.findSessionUser('h-ana', 4_999), 'ana');
  assert.equal(await operators.findSessionUser('h-ana', 5_000), undefined);
  assert.equal(await operators.findSessionUser('h-bo', 4_999), 'bo');
  assert.equal(await operators.findSessionUser('h-none', 0), undefined);
  const row = await store.db.selectFrom('operator_sessions').selectAll().where('token_hash', '=', 'h-ana').executeTakeFirstOrThrow();
  assert.deepEqual([row.username, Number(row.expires_at), Number(row.created_at)], ['ana', 5_000, 1_000]);
  await operators.deleteSession('h-bo');
  assert.equal(await operators.findSessionUser('h-bo', 4_999), undefined);
  assert.equal(await operators.findSessionUser('h-ana', 4_999), 'ana', 'only that session');
});

test('the sweep deletes the sessions expired at its instant (expiresAt at or before it) and keeps the rest', async () => {
  await operators.insertSession({ tokenHash: 's-1', username: 'ana', expiresAt: 20_000 }, 1);
  await operators.insertSession({ tokenHash: 's-2', username: 'ana', expiresAt: 20_001 }, 1);
  await operators.insertSession({ tokenHash: 's-3', username: 'bo', expiresAt: 19_999 }, 1);
  await operators.deleteExpiredSessions(20_000);
  const left = await store.db.selectFrom('operator_sessions').select('token_hash').where('token_hash', 'like', 's-%').orderBy('token_hash').execute();
  assert.deepEqual(left.map((r) => r.token_hash), ['s-2']);
});
