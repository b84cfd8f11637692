/**
 * Login throttling per account and per address apart (issue 41), on a running platform, with the
 * in-process throttle and with the Redis one (127.0.0.1:6379): a console login spray from one address
 * (stores behind one NAT share it) never throttles the app users on it, nor the right password of an
 * operator it has not been failing on; the address is slowed on the accounts it has been failing on
 * (429 + Retry-After, growing), an account is throttled after its own failures.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { deleteKeys, redisSkip, testRedisUrl, uniquePrefix } from './support/redis.ts';
import { addUser } from '../src/identity/add-user.ts';
import { addOperator } from '../src/console/operators.ts';
import { createOperatorRepository } from '../src/store/operator-repository.ts';
import { createPasswordHasher } from '../src/identity/password-hasher.ts';

const nat = '198.51.100.20';
const redisMissing = await redisSkip();

for (const throttle of ['in-process', 'redis'] as const) {
  describe(`login throttle (${throttle})`, { skip: throttle === 'redis' ? redisMissing : false }, () => {
    let t: TestPlatform;
    const prefix = uniquePrefix('login-throttle');
    before(async () => {
      t = await startTestPlatform({ env: { ...(throttle === 'redis' && { REDIS_URL: testRedisUrl }) }, redisKeyPrefix: prefix });
      const { platform } = t;
      await addOperator({ operators: createOperatorRepository(platform.store.db), passwords: createPasswordHasher(), clock: platform.clock }, { username: 'owner', password: 'owner password 1234' });
      const deps = { users: platform.identity.users, createWalletAccount: () => platform.wallet.createAddress() };
      for (const id of ['cashier1', 'cashier2']) await addUser(deps, { id, password: `${id} password`, name: id });
    });
    after(async () => {
      await t?.stop();
      if (throttle === 'redis') await deleteKeys(prefix);
    });

    const consoleLogin = async (username: string, password: string, from = nat) => {
      const response = await t.app.inject({
        method: 'POST', url: '/console/login', remoteAddress: from,
        payload: `username=${encodeURIComponent(username)}&password=${encodeURIComponent(password)}`, headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      return { status: response.statusCode, retryAfter: response.headers['retry-after'] };
    };
    const appLogin = async (id: string, password: string, from = nat) => {
      const response = await t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', remoteAddress: from, payload: { id, password } });
      return { status: response.statusCode, retryAfter: response.headers['retry-after'] };
    };

    test('a console spray of 40 failures from one address: every app user there logs in, the operator\'s right password too; the sprayed names are slowed, with Retry-After', async () => {
      for (let i = 0; i < 40; i += 1) {
        const answer = await consoleLogin(`guess${i}`, 'wrong password 1234');
        assert.equal(answer.status, 401, `guess ${i} is checked (a new name each): ${JSON.stringify(answer)}`);
      }
      assert.equal((await appLogin('cashier1', 'cashier1 password')).status, 200, 'an app user on the same address');
      assert.equal((await appLogin('cashier2', 'cashier2 password')).status, 200);
      assert.equal((await consoleLogin('owner', 'owner password 1234')).status, 303, 'the operator\'s right password');
      // A name the address has been failing on, past its budget: refused before the check, told when to come back.
      const slowed = await consoleLogin('guess39', 'wrong password 1234');
      assert.equal(slowed.status, 429);
      assert.match(String(slowed.retryAfter), /^[1-9]\d*$/);
      // Another address is not slowed at all.
      assert.equal((await consoleLogin('guess39', 'wrong password 1234', '198.51.100.99')).status, 401);
    });

    test('an app user\'s own failures throttle that account (429 + Retry-After), not the other app users on the address', async () => {
      const from = '198.51.100.30';
      for (let i = 0; i < 5; i += 1) assert.equal((await appLogin('cashier1', 'wrong', from)).status, 401);
      const locked = await appLogin('cashier1', 'cashier1 password', from);
      assert.equal(locked.status, 429);
      assert.match(String(locked.retryAfter), /^[1-9]\d*$/);
      assert.equal((await appLogin('cashier2', 'cashier2 password', from)).status, 200);
    });
  });
}
