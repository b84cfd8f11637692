import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import { createPasswordHasher } from '../identity/password-hasher.ts';
import { createUserRepository, type UserRecord } from './user-repository.ts';
import { createUserService, invalidCredentialsMessage } from '../identity/users.ts';
import { storeFactories } from '../../test/support/store-factories.ts';

const record = (id: string, overrides: Partial<UserRecord> = {}): UserRecord => ({
  id, passwordHash: 'not-a-hash', name: `User ${id}`, telNo: null, email: null,
  walletAddress: null, did: null, createdAt: 1_700_000_000_123, ...overrides,
});

for (const factory of storeFactories) {
  test(`users on ${factory.name}`, async (t) => {
    const opened = await factory.open();
    t.after(() => opened.dispose());
    const repo = createUserRepository(opened.store.db);
    const users = createUserService({ users: repo, passwords: createPasswordHasher(), clock: () => 1_700_000_000_999 });

    await t.test('insert and find keep every field, nulls included, timestamps as numbers', async () => {
      const full = record('full', { telNo: '+82-10-1234-5678', email: '', walletAddress: '0xabc', did: 'did:ethr:0xabc' });
      assert.equal(await repo.insert(full), true);
      assert.deepEqual(await repo.findById('full'), full);
      assert.equal(await repo.insert(record('sparse')), true);
      assert.deepEqual(await repo.findById('sparse'), record('sparse'));
      assert.equal(typeof (await repo.findById('sparse'))?.createdAt, 'number');
      assert.equal(await repo.findById('nobody'), undefined);
    });

    await t.test('a taken id is not inserted twice', async () => {
      assert.equal(await repo.insert(record('twice')), true);
      assert.equal(await repo.insert(record('twice', { name: 'Other' })), false);
      assert.equal((await repo.findById('twice'))?.name, 'User twice');
    });

    await t.test('ids are case-sensitive', async () => {
      await repo.insert(record('CaseUser'));
      assert.equal(await repo.findById('caseuser'), undefined);
    });

    await t.test('a DID is unique once set; any number of users have none', async () => {
      await repo.insert(record('d1'));
      await repo.insert(record('d2'));
      assert.equal(await repo.setDid('d1', 'did:ethr:0x1111'), true);
      assert.equal((await repo.findByDid('did:ethr:0x1111'))?.id, 'd1');
      await assert.rejects(repo.setDid('d2', 'did:ethr:0x1111'));
      assert.equal(await repo.setDid('missing', 'did:ethr:0x2222'), false);
      assert.equal(await repo.findByDid('did:ethr:0x2222'), undefined);
    });

    await t.test('wallet address and password hash updates', async () => {
      await repo.insert(record('w'));
      assert.equal(await repo.setWalletAddress('w', '0xfeed'), true);
      assert.equal(await repo.setWalletAddress('missing', '0xfeed'), false);
      await repo.setPasswordHash('w', 'new-hash');
      const found = await repo.findById('w');
      assert.equal(found?.walletAddress, '0xfeed');
      assert.equal(found?.passwordHash, 'new-hash');
    });

    await t.test('createUser stores an argon2id hash (OWASP parameters), never the password', async () => {
      const user = await users.createUser({ id: 'alice', password: 'correct horse battery', name: ' Alice Kim ', email: 'alice@example.com', tel: '010-1234-5678' });
      assert.deepEqual(user, {
        id: 'alice', name: 'Alice Kim', telNo: '010-1234-5678', email: 'alice@example.com',
        walletAddress: null, did: null, createdAt: 1_700_000_000_999,
      });
      const stored = await repo.findById('alice');
      assert.match(stored?.passwordHash ?? '', /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
      assert.ok(!stored?.passwordHash.includes('correct horse battery'));
    });

    await t.test('createUser refuses a taken id and bad fields', async () => {
      await assert.rejects(users.createUser({ id: 'alice', password: 'another password', name: 'A' }),
        (e: unknown) => e instanceof DomainError && e.code === 'auth.user_exists');
      const invalid = (e: unknown) => e instanceof DomainError && e.code === 'request.invalid';
      await assert.rejects(users.createUser({ id: 'with space', password: 'long enough', name: 'x' }), invalid);
      await assert.rejects(users.createUser({ id: 'x'.repeat(129), password: 'long enough', name: 'x' }), invalid);
      await assert.rejects(users.createUser({ id: 'short', password: 'short', name: 'x' }), invalid);
      await assert.rejects(users.createUser({ id: 'noname', password: 'long enough', name: '  ' }), invalid);
      await assert.rejects(users.createUser({ id: 'bademail', password: 'long enough', name: 'x', email: 'nope' }), invalid);
      await assert.rejects(users.createUser({ id: 'badtel', password: 'long enough', name: 'x', tel: 'call me' }), invalid);
    });

    await t.test('verifyPassword: right password gives the user; wrong password and unknown id look alike', async () => {
      assert.equal((await users.verifyPassword('alice', 'correct horse battery')).id, 'alice');
      const denied = (e: unknown) => e instanceof DomainError && e.code === 'request.unauthorized' && e.message === invalidCredentialsMessage;
      await assert.rejects(users.verifyPassword('alice', 'wrong password'), denied);
      await assert.rejects(users.verifyPassword('nobody-here', 'wrong password'), denied);
    });

    await t.test('a hash made with weaker parameters is upgraded on the next good login', async () => {
      const weak = createPasswordHasher({ algorithm: 2 as never, memoryCost: 1024, timeCost: 1, parallelism: 1 });
      await repo.insert(record('legacy', { passwordHash: await weak.hash('legacy password') }));
      await users.verifyPassword('legacy', 'legacy password');
      assert.match((await repo.findById('legacy'))?.passwordHash ?? '', /m=19456,t=2,p=1/);
      assert.equal((await users.verifyPassword('legacy', 'legacy password')).id, 'legacy');
    });
  });
}
