import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import { storeFactories } from '../../test/support/store-factories.ts';
import { createWebsiteLoginRepository } from '../store/website-login-repository.ts';
import { createWebsiteLoginService } from './website-login.ts';

const site = 'https://shop.example/?';
const ip = '203.0.113.5';
const caller = { requesterIp: ip };

const isCode = (code: string) => (e: unknown) => e instanceof DomainError && e.code === code;
const unknown = isCode('auth.login_request_unknown');
const pending = isCode('auth.login_request_pending');

for (const factory of storeFactories) {
  test(`website login on ${factory.name}`, async (t) => {
    const opened = await factory.open();
    t.after(() => opened.dispose());
    let now = 1_700_000_000_000;
    const repository = createWebsiteLoginRepository(opened.store.db);
    const logins = createWebsiteLoginService({ repository, clock: () => now });

    await t.test('start issues an unguessable requestId and stores only its hash', async () => {
      const started = await logins.start({ site, waitTime: 30, requesterIp: ip });
      assert.match(started.requestId, /^[A-Za-z0-9_-]{43}$/);
      assert.equal(started.waitTime, 30);
      assert.equal(started.expiresAt, now + 30_000);
      const row = await repository.find(sha256Hex(started.requestId));
      assert.equal(row?.site, site);
      assert.equal(row?.requesterIp, ip);
      assert.equal(await repository.find(started.requestId), undefined);
      assert.notEqual((await logins.start({ site, requesterIp: ip })).requestId, started.requestId);
    });

    await t.test('waitTime defaults to 120 s and must be whole seconds 1..600', async () => {
      assert.equal((await logins.start({ site, requesterIp: ip })).waitTime, 120);
      for (const waitTime of [0, 601, 1.5, Number.NaN]) {
        await assert.rejects(logins.start({ site, waitTime, requesterIp: ip }), isCode('request.invalid'));
      }
      await assert.rejects(logins.start({ site: 'x'.repeat(2049), requesterIp: ip }), isCode('request.invalid'));
    });

    await t.test('pending, then completed, then readable exactly once', async () => {
      const { requestId } = await logins.start({ site, waitTime: 60, requesterIp: ip });
      assert.deepEqual(await logins.describe(requestId), { site, expiresAt: now + 60_000 });
      await assert.rejects(logins.takeResult(requestId, caller), pending);
      await logins.complete(requestId, 'alice');
      await assert.rejects(logins.describe(requestId), unknown);
      assert.deepEqual(await logins.takeResult(requestId, caller), { userId: 'alice' });
      await assert.rejects(logins.takeResult(requestId, caller), unknown);
    });

    await t.test('a request is completed only once', async () => {
      const { requestId } = await logins.start({ site, requesterIp: ip });
      await logins.complete(requestId, 'alice');
      await assert.rejects(logins.complete(requestId, 'mallory'), unknown);
      assert.deepEqual(await logins.takeResult(requestId, caller), { userId: 'alice' });
    });

    await t.test('concurrent reads: one wins', async () => {
      const { requestId } = await logins.start({ site, requesterIp: ip });
      await logins.complete(requestId, 'alice');
      const results = await Promise.allSettled([1, 2, 3, 4].map(() => logins.takeResult(requestId, caller)));
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    });

    await t.test('unknown and malformed ids', async () => {
      await assert.rejects(logins.takeResult('A'.repeat(43), caller), unknown);
      await assert.rejects(logins.takeResult('short', caller), unknown);
      await assert.rejects(logins.complete('A'.repeat(43), 'alice'), unknown);
    });

    await t.test('expiry: unanswered requests time out; an answer stays readable a minute', async () => {
      const a = await logins.start({ site, waitTime: 10, requesterIp: ip });
      const b = await logins.start({ site, waitTime: 10, requesterIp: ip });
      now += 9_000;
      await logins.complete(b.requestId, 'alice');
      now += 1_000;
      await assert.rejects(logins.takeResult(a.requestId, caller), unknown);
      await assert.rejects(logins.complete(a.requestId, 'alice'), unknown);
      now += 50_000; // 9 s + 60 s after start: still inside the minute after the answer
      assert.deepEqual(await logins.takeResult(b.requestId, caller), { userId: 'alice' });
    });

    await t.test('cancel: pending or answered-but-unread requests end; cancel is idempotent', async () => {
      const a = await logins.start({ site, requesterIp: ip });
      await logins.cancel(a.requestId, caller);
      await logins.cancel(a.requestId, caller);
      await assert.rejects(logins.takeResult(a.requestId, caller), unknown);
      await assert.rejects(logins.complete(a.requestId, 'alice'), unknown);
      const b = await logins.start({ site, requesterIp: ip });
      await logins.complete(b.requestId, 'alice');
      await logins.cancel(b.requestId, caller);
      await assert.rejects(logins.takeResult(b.requestId, caller), unknown);
      await logins.cancel('nonsense', caller);
      await logins.cancel('B'.repeat(43), caller);
    });

    await t.test('only the requester IP reads or cancels (by default)', async () => {
      const { requestId } = await logins.start({ site, requesterIp: ip });
      await logins.complete(requestId, 'alice');
      const stranger = { requesterIp: '198.51.100.1' };
      await assert.rejects(logins.takeResult(requestId, stranger), unknown);
      await logins.cancel(requestId, stranger);
      assert.deepEqual(await logins.takeResult(requestId, caller), { userId: 'alice' });

      const unbound = createWebsiteLoginService({ repository, clock: () => now, bindToRequesterIp: false });
      const other = await unbound.start({ site, requesterIp: ip });
      await unbound.complete(other.requestId, 'alice');
      assert.deepEqual(await unbound.takeResult(other.requestId, stranger), { userId: 'alice' });
    });

    await t.test('expired rows are deleted an hour after expiry when new requests come in', async () => {
      const old = await logins.start({ site, waitTime: 1, requesterIp: ip });
      now += 3_600_000 + 2_000;
      await logins.start({ site, requesterIp: ip });
      assert.equal(await repository.find(sha256Hex(old.requestId)), undefined);
    });
  });
}
