import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import { addUser, type NewWalletAccount } from './add-user.ts';
import type { NewUser, User, UserService } from './users.ts';

/** In-memory users: enough of UserService for addUser. */
function fakeUsers() {
  const created: NewUser[] = [];
  const users: Pick<UserService, 'createUser' | 'findUser'> = {
    async findUser(id) {
      const found = created.find((u) => u.id === id);
      return found && ({ id: found.id, name: found.name, telNo: found.tel ?? null, email: found.email ?? null, walletAddress: found.walletAddress ?? null, did: null, createdAt: 1 } satisfies User);
    },
    async createUser(input) {
      if (created.some((u) => u.id === input.id)) throw new DomainError('auth.user_exists', 'taken');
      created.push(input);
      return (await users.findUser(input.id)) as User;
    },
  };
  return { users, created };
}

function fakeWallet() {
  const accounts: NewWalletAccount[] = [];
  const createWalletAccount = async () => {
    const account = { address: `0x${String(accounts.length + 1).padStart(40, '0')}`, secretKey: 'secret-key', mnemonic: 'test test test test test test test test test test test junk' };
    accounts.push(account);
    return account;
  };
  return { createWalletAccount, accounts };
}

test('creates the user with a wallet account of their own and returns its secrets once', async () => {
  const { users, created } = fakeUsers();
  const wallet = fakeWallet();
  const result = await addUser({ users, createWalletAccount: wallet.createWalletAccount },
    { id: 'alice', password: 'correct horse battery', name: 'Alice Kim', email: 'alice@example.com', tel: '010-1234-5678' });
  assert.deepEqual(result, {
    userId: 'alice', address: '0x0000000000000000000000000000000000000001',
    secretKey: 'secret-key', mnemonic: 'test test test test test test test test test test test junk',
  });
  assert.equal(created[0]?.walletAddress, result.address);
  assert.equal(created[0]?.email, 'alice@example.com');
  assert.equal(created[0]?.tel, '010-1234-5678');
});

test('refuses a taken id or bad input before making a wallet account', async () => {
  const { users } = fakeUsers();
  const wallet = fakeWallet();
  const deps = { users, createWalletAccount: wallet.createWalletAccount };
  await addUser(deps, { id: 'alice', password: 'correct horse battery', name: 'Alice' });
  await assert.rejects(addUser(deps, { id: 'alice', password: 'another password', name: 'Alice 2' }),
    (e: unknown) => e instanceof DomainError && e.code === 'auth.user_exists');
  await assert.rejects(addUser(deps, { id: 'bob', password: 'short', name: 'Bob' }),
    (e: unknown) => e instanceof DomainError && e.code === 'request.invalid');
  assert.equal(wallet.accounts.length, 1);
});
