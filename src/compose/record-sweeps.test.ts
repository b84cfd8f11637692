import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from '../store/db.ts';
import { createWalletRepository } from '../store/wallet-repository.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import { createWebsiteLoginRepository } from '../store/website-login-repository.ts';
import { createWebsiteLoginService } from '../identity/website-login.ts';
import { createLogger } from '#shared/logger.ts';
import { scheduleRecordSweeps, sweepExpiredRecords } from './record-sweeps.ts';

const minute = 60_000;
const hour = 60 * minute;

for (const factory of storeFactories) {
  describe(`expiry sweeps on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    before(async () => {
      ({ store, dispose } = await factory.open());
      // The temp keys below belong to this account (a key is only stored for an address that has one).
      await createWalletRepository(store.db).insertAccount({ address: '0xA', privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
    });
    after(async () => { await dispose?.(); });

    test('delete exactly the expired temp keys, idempotency keys and website-login requests', async () => {
      const now = 100 * hour;
      const wallet = createWalletRepository(store.db);
      const tempKey = async (keyHash: string, expiresAt: number, usedAt: number | null) => {
        assert.equal(await wallet.insertTempKeyForAccount({ keyHash, address: '0xA', keyType: 'transfer', expiresAt }, 0), true);
        if (usedAt !== null) assert.equal(await wallet.consumeTempKey(keyHash, usedAt), true);
      };
      await tempKey('unused-expired', now - 1, null);
      await tempKey('unused-expiring-now', now, null);
      await tempKey('unused-live', now + minute, null);
      await tempKey('used-long-ago', now + minute, now - 2 * hour);
      await tempKey('used-within-grace', now + minute, now - 10 * minute);

      const keys = createIdempotencyRepository(store.db);
      const idem = (key: string, expiresAt: number) => keys.claim({ scope: 'pay:u', key, fingerprint: 'f', reference: null, createdAt: 0, expiresAt });
      await idem('expired', now - 1);
      await idem('live', now + 1);

      const logins = createWebsiteLoginRepository(store.db);
      const login = (hash: string, expiresAt: number) => logins.insert({
        requestIdHash: hash, site: 'https://shop.example/?', requesterIp: '127.0.0.1', expiresAt,
        userId: null, completedAt: null, consumedAt: null, cancelledAt: null, createdAt: 0,
      });
      await login('past-retention', now - hour - 1);
      await login('expired-within-retention', now - minute);
      await login('pending', now + minute);

      const clock = () => now;
      const deps = {
        tempKeys: wallet, idempotencyKeys: keys, websiteLogins: createWebsiteLoginService({ repository: logins, clock, retentionMs: hour }),
        clock, logger: createLogger('silent'), usedTempKeyGraceMs: hour,
      };
      assert.deepEqual(await sweepExpiredRecords(deps), { tempKeys: 3, idempotencyKeys: 1, websiteLogins: 1 });

      for (const gone of ['unused-expired', 'unused-expiring-now', 'used-long-ago']) assert.equal(await wallet.findTempKey(gone), undefined, gone);
      for (const kept of ['unused-live', 'used-within-grace']) assert.ok(await wallet.findTempKey(kept), kept);
      const remaining = await store.db.selectFrom('idempotency_keys').select('idem_key').execute();
      assert.deepEqual(remaining.map((row) => row.idem_key), ['live']);
      assert.equal(await logins.find('past-retention'), undefined);
      assert.ok(await logins.find('expired-within-retention'));
      assert.ok(await logins.find('pending'));

      assert.deepEqual(await sweepExpiredRecords(deps), { tempKeys: 0, idempotencyKeys: 0, websiteLogins: 0 }, 'a second sweep finds nothing');
    });

    test('the schedule sweeps on its interval and stops', async () => {
      const wallet = createWalletRepository(store.db);
      assert.equal(await wallet.insertTempKeyForAccount({ keyHash: 'scheduled', address: '0xA', keyType: 'transfer', expiresAt: 1 }, 0), true);
      let sweeps = 0;
      const schedule = scheduleRecordSweeps({
        tempKeys: { deleteDeadTempKeys: async (now, usedBefore) => { sweeps += 1; return wallet.deleteDeadTempKeys(now, usedBefore); } },
        idempotencyKeys: { sweepExpired: async () => 0 }, websiteLogins: { sweepExpired: async () => 0 },
        clock: () => 10, logger: createLogger('silent'), usedTempKeyGraceMs: 0,
      }, 20);
      while (sweeps < 2) await new Promise((resolve) => setTimeout(resolve, 10));
      await schedule.stop();
      const after = sweeps;
      await new Promise((resolve) => setTimeout(resolve, 60));
      assert.equal(sweeps, after, 'no sweep after stop');
      assert.equal(await wallet.findTempKey('scheduled'), undefined);
    });
  });
}
