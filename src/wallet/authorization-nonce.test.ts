import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { getAddress, size } from 'viem';
import { storeFactories } from '../../test/support/store-factories.ts';
import { createAuthorizationRepository, type AuthorizationRepository, type CountedNonce } from '../store/authorization-repository.ts';
import { createWalletRepository, type WalletRepository } from '../store/wallet-repository.ts';
import type { Store } from '../store/db.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import { accountNonce, countedNonce, isAccountTransferRow, nextAuthorizationNonce } from './authorization-nonce.ts';

// A custodial account's EIP-3009 nonces (src/wallet/authorization-nonce.ts): 7 bytes that compress,
// and never one twice for an account, however many reservations race, whatever the clock does.

test('the next nonce is the clock in microseconds, or one above the account\'s highest when that is ahead; 7 bytes', () => {
  assert.equal(nextAuthorizationNonce(undefined, 1_800_000_000_000), 1_800_000_000_000_000n);
  assert.equal(nextAuthorizationNonce(1_700_000_000_000_000n, 1_800_000_000_000), 1_800_000_000_000_000n, 'a past nonce: the clock');
  assert.equal(nextAuthorizationNonce(1_800_000_000_000_000n, 1_800_000_000_000), 1_800_000_000_000_001n, 'the clock not past it: one above');
  assert.equal(nextAuthorizationNonce(1_900_000_000_000_000n, 1_800_000_000_000), 1_900_000_000_000_001n, 'a clock gone back: still one above');
  assert.throws(() => nextAuthorizationNonce((1n << 64n) - 1n, 0), /no counter nonce is left/);
  const { chainNonce, nonce } = countedNonce('ethereum', getAddress(`0x${'cc'.repeat(20)}`), getAddress(`0x${'aa'.repeat(20)}`), undefined, 1_800_000_000_000);
  assert.equal(size(chainNonce as `0x${string}`), 32);
  assert.equal(Math.ceil(BigInt(chainNonce).toString(16).length / 2), 7, '7 significant bytes');
  assert.equal(nonce, authorizationKey('ethereum', `0x${'cc'.repeat(20)}`, `0x${'aa'.repeat(20)}`, chainNonce), 'its row is keyed as an outside payer\'s');
});

for (const factory of storeFactories) {
  describe(`counter nonces reserved on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let wallet: WalletRepository;
    let authorizations: AuthorizationRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      wallet = createWalletRepository(store.db);
      authorizations = createAuthorizationRepository(store.db, factory.name === 'sqlite' ? 'process' : 'row');
    });
    after(async () => { await dispose?.(); });

    let accounts = 0;
    const newAccount = async () => {
      const address = getAddress(`0x${(++accounts).toString(16).padStart(40, 'b')}`);
      await wallet.insertAccount({ address, privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
      return address;
    };
    const token = getAddress(`0x${'cc'.repeat(20)}`);
    /** Reserves one authorization of `from` with the clock at `nowMs`: its counted nonce, or the refusal. */
    const reserve = async (from: `0x${string}`, nowMs: number, contractAddress = token) => authorizations.reserveCounted({
      network: 'ethereum', reference: `test:${randomUUID()}`, contractAddress, fromAddress: from, toAddress: from, value: '1',
      validBefore: 10_000, fromBlock: 1, createdAt: Date.now(), updatedAt: Date.now(),
    }, { balance: async () => 10n ** 18n }, (previous) => countedNonce('ethereum', contractAddress, from, previous, nowMs));
    const counted = (outcome: CountedNonce | string): CountedNonce => {
      assert.equal(typeof outcome, 'object', String(outcome));
      return outcome as CountedNonce;
    };

    test('forty reservations of one account at once, the clock standing still: forty nonces, none twice, each one above the last', async () => {
      const from = await newAccount();
      const nonces = (await Promise.all(Array.from({ length: 40 }, () => reserve(from, 1_800_000_000_000)))).map((o) => BigInt(counted(o).chainNonce));
      assert.equal(new Set(nonces).size, 40);
      assert.deepEqual([...nonces].sort((a, b) => (a < b ? -1 : 1)), Array.from({ length: 40 }, (_, i) => 1_800_000_000_000_000n + BigInt(i)));
    });

    test('a released reservation (never sent) may give its nonce again; a sent one never does, even with the clock gone back', async () => {
      const from = await newAccount();
      const first = counted(await reserve(from, 1_800_000_000_000));
      const second = counted(await reserve(from, 1_800_000_000_000));
      assert.equal(await authorizations.release(second.nonce), true);
      assert.equal(counted(await reserve(from, 1_800_000_000_000)).chainNonce, second.chainNonce, 'the released one never left: its number is free');
      await authorizations.finish(first.nonce, 'used', { txHash: '0x01' }, Date.now());
      const later = counted(await reserve(from, 1_000_000_000_000));
      assert.equal(BigInt(later.chainNonce), BigInt(second.chainNonce) + 1n, 'above every nonce the account holds, not the clock');
    });

    test('each account and token counts on its own; the row key names them, so equal nonces of two accounts never clash', async () => {
      const [a, b] = [await newAccount(), await newAccount()];
      const other = getAddress(`0x${'dd'.repeat(20)}`);
      const [x, y, z] = [counted(await reserve(a, 1_800_000_000_000)), counted(await reserve(b, 1_800_000_000_000)), counted(await reserve(a, 1_800_000_000_000, other))];
      assert.equal(x.chainNonce, y.chainNonce);
      assert.equal(x.chainNonce, z.chainNonce);
      assert.equal(new Set([x.nonce, y.nonce, z.nonce]).size, 3);
      assert.equal((await authorizations.find(x.nonce))?.chainNonce, x.chainNonce);
    });
  });
}

test('an account transfer\'s nonce is dense: 0 first, then the highest + 1; its row key sorts as the nonce does and names the path', () => {
  const from = getAddress(`0x${'aa'.repeat(20)}`);
  assert.deepEqual(accountNonce('bnb', from, undefined), { chainNonce: `0x${'0'.repeat(64)}`, nonce: `bnb:account:0x${'aa'.repeat(20)}:0x${'0'.repeat(64)}` });
  assert.equal(BigInt(accountNonce('bnb', from, 255n).chainNonce), 256n);
  const keys = [0n, 9n, 10n, 255n, 256n, 4096n].map((n) => accountNonce('bnb', from, n).nonce);
  assert.deepEqual([...keys].sort(), keys, 'lexical order is numeric order');
  assert.equal(isAccountTransferRow({ network: 'bnb', nonce: keys[0]! }), true);
  assert.equal(isAccountTransferRow({ network: 'bnb', nonce: countedNonce('bnb', from, from, undefined, 1).nonce }), false);
});

for (const factory of storeFactories) {
  describe(`account-transfer nonces reserved on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let wallet: WalletRepository;
    let authorizations: AuthorizationRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      wallet = createWalletRepository(store.db);
      authorizations = createAuthorizationRepository(store.db, factory.name === 'sqlite' ? 'process' : 'row');
    });
    after(async () => { await dispose?.(); });

    let accounts = 0;
    const newAccount = async () => {
      const address = getAddress(`0x${(++accounts).toString(16).padStart(40, 'e')}`);
      await wallet.insertAccount({ address, privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
      return address;
    };
    const [usdt, busd] = [getAddress(`0x${'c1'.repeat(20)}`), getAddress(`0x${'c2'.repeat(20)}`)];
    const reserve = async (from: `0x${string}`, contractAddress = usdt, network = 'bnb', choose = (previous: bigint | undefined) => accountNonce(network as 'bnb', from, previous)) =>
      authorizations.reserveAccountNonce({
        network, reference: `test:${randomUUID()}`, contractAddress, fromAddress: from, toAddress: from, value: '1',
        validBefore: 10_000, fromBlock: 1, createdAt: Date.now(), updatedAt: Date.now(),
      }, { balance: async () => 10n ** 18n }, choose);
    const nonceOf = (outcome: CountedNonce | string): bigint => {
      assert.equal(typeof outcome, 'object', String(outcome));
      return BigInt((outcome as CountedNonce).chainNonce);
    };

    test('forty reservations of one account at once, in two tokens: the nonces 0 to 39, each once (one sequence per account and network)', async () => {
      const from = await newAccount();
      const nonces = (await Promise.all(Array.from({ length: 40 }, (_, i) => reserve(from, i % 2 === 0 ? usdt : busd)))).map(nonceOf);
      assert.deepEqual([...nonces].sort((a, b) => (a < b ? -1 : 1)), Array.from({ length: 40 }, (_, i) => BigInt(i)));
      assert.equal(nonceOf(await reserve(from, usdt, 'opbnb')), 0n, 'another network counts on its own');
    });

    test('a nonce is never reserved twice: a second row with a taken key is refused (duplicate; the key is the table\'s primary key), whatever chose it', async () => {
      const from = await newAccount();
      assert.equal(nonceOf(await reserve(from)), 0n);
      assert.equal(await reserve(from, busd, 'bnb', () => accountNonce('bnb', from, undefined)), 'duplicate', 'nonce 0 again, in another token');
      assert.equal(nonceOf(await reserve(from)), 1n);
      assert.equal(nonceOf(await reserve(from, usdt, 'bnb', () => accountNonce('bnb', from, 254n))), 255n);
      assert.equal(nonceOf(await reserve(from)), 256n, 'the database orders the keys as numbers (0x…ff below 0x…100)');
    });

    test('a released reservation (never journaled, its signature never sent) frees its nonce; a submitted or ended one never does', async () => {
      const from = await newAccount();
      const [first, second] = [await reserve(from), await reserve(from)] as CountedNonce[];
      assert.equal(await authorizations.release(second!.nonce), true);
      assert.equal(nonceOf(await reserve(from)), 1n, 'the released 1 is given again');
      await authorizations.finish(first!.nonce, 'canceled', {}, Date.now());
      assert.equal(nonceOf(await reserve(from)), 2n);
    });
  });
}
