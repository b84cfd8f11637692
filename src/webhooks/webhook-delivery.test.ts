import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import { storeFactories } from '../../test/support/store-factories.ts';
import { waitFor } from '../../test/support/wait-for.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.ts';
import type { Store } from '../store/db.ts';
import { createKeyVault } from '#shared/key-vault.ts';
import { createLogger } from '#shared/logger.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import { appendWebhookEvent, createWebhookRepository, type WebhookRepository } from '../store/webhook-repository.ts';
import { retryWindowMs } from './backoff.ts';
import { createWebhookDelivery } from './webhook-delivery.ts';
import { addWebhookEndpoint, rotateWebhookSecret, type WebhookEndpointDeps } from './webhook-endpoints.ts';
import { verifySignature } from './signature.ts';
import type { HostLookup } from './webhook-address.ts';
import { paymentFailedEvent } from './webhook-events.ts';

// The outbox and its sender on each dialect, against a real HTTP receiver, on a fake clock (the
// backoff's hours pass at once): what a store's back office sees when it is down and comes back.
for (const factory of storeFactories) {
  describe(`webhook delivery on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let repository: WebhookRepository;
    let receiver: WebhookReceiver;
    let now = Date.UTC(2026, 10, 23, 9, 0, 0);
    const clock = () => now;
    const vault = createKeyVault(randomBytes(32));
    let endpointDeps: WebhookEndpointDeps;
    const sentAt = (signature: string) => Number(/t=(\d+)/.exec(signature)?.[1]);
    const delivery = (lookup?: HostLookup) => createWebhookDelivery({
      repository, vault, clock, logger: createLogger('silent'), timeoutMs: 5000, batchSize: 4, lookup,
      policy: { initialMs: 10_000, maxMs: 3_600_000, windowMs: retryWindowMs },
      resCodeOf: () => ({ res_code: '03', res_message: 'Transaction time expired' }),
    });
    const event = (tranNo: string) => paymentFailedEvent({ tid: 'T-1001', tranNo, exchangeAmount: '100', exchangeCurrency: 'KRW' }, 'payment.expired');
    const append = (tranNo: string, tid = 'T-1001') => store.db.transaction().execute((trx) => appendWebhookEvent(trx, { ...event(tranNo), tid }, now));

    before(async () => {
      ({ store, dispose } = await factory.open());
      repository = createWebhookRepository(store.db, store.dialect);
      const merchants = createMerchantRepository(store.db);
      await merchants.insertStore({ tid: 'T-1001', name: 'Cafe', settlementAddress: '0xS', apiKeyHash: 'h1' }, now);
      await merchants.insertStore({ tid: 'T-2002', name: 'Bakery', settlementAddress: '0xS2', apiKeyHash: 'h2' }, now);
      endpointDeps = { webhooks: repository, merchants, vault, clock };
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await receiver?.close();
      await dispose?.();
    });

    test('a back office down for an hour gets every event of that hour once it is back, each once, each signed', async () => {
      const { secret } = await addWebhookEndpoint(endpointDeps, { tid: 'T-1001', url: receiver.url, events: [], allowPrivate: true });
      await receiver.close();
      const written: string[] = [];
      const sender = delivery();
      // An hour of events, the sender trying all along: every attempt is refused.
      for (let minute = 0; minute < 60; minute += 5) {
        written.push(await append(`tran-${minute}`));
        await sender.runOnce();
        now += 5 * 60_000;
      }
      await append('other-store', 'T-2002');
      assert.equal(receiver.received.length, 0, 'nothing arrived while it was down');
      assert.equal((await repository.counts()).pending, written.length, 'another store\'s event is not this endpoint\'s');

      await receiver.open();
      // Within the largest wait (one hour) every delivery is due again.
      for (let step = 0; step < 12; step++) {
        now += 5 * 60_000;
        await sender.runOnce();
      }
      assert.deepEqual([...receiver.ids()].sort(), [...written].sort(), 'every event of the hour, none missing');
      assert.equal(receiver.received.length, written.length, 'each once');
      for (const { body, signature, event: sent } of receiver.received) {
        // Valid when it arrived (on the fake clock: the moment it was signed).
        assert.equal(verifySignature(secret, signature, body, { now: sentAt(signature) }), true);
        assert.deepEqual(Object.keys(sent), ['id', 'type', 'created', 'data']);
        assert.equal(sent.type, 'payment.failed');
        assert.equal(sent.data.res_code, '03');
        assert.equal(sent.data.failure_code, 'payment.expired');
      }
      assert.deepEqual(await repository.counts(), { pending: 0, delivered: written.length, failed: 0 });
    });

    test('two senders on one store never deliver an event twice', async () => {
      receiver.received.length = 0;
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push(await append(`both-${i}`));
      const [a, b] = [delivery(), delivery()];
      await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
      assert.deepEqual([...receiver.received.map((r) => r.event.id)].sort(), [...ids].sort());
    });

    test('after a rotation both secrets sign for 24 hours, then only the new one', async () => {
      receiver.received.length = 0;
      const [endpoint] = await repository.listEndpoints('T-1001');
      const { secret: newSecret } = await rotateWebhookSecret(endpointDeps, endpoint!.id);
      await append('rotated');
      await delivery().runOnce();
      const [during] = receiver.received;
      assert.equal(during!.signature.split(',').filter((p) => p.startsWith('v1=')).length, 2);
      assert.equal(verifySignature(newSecret, during!.signature, during!.body, { now: Math.floor(now / 1000) }), true);
      now += retryWindowMs + 1;
      await append('after-overlap');
      await delivery().runOnce();
      const last = receiver.received.at(-1)!;
      assert.equal(last.signature.split(',').filter((p) => p.startsWith('v1=')).length, 1);
      assert.equal(verifySignature(newSecret, last.signature, last.body, { now: Math.floor(now / 1000) }), true);
    });

    test('stopping cuts an attempt in flight short and leaves its delivery due at once', async () => {
      // A receiver that accepts the request and never answers.
      let reached = false;
      const hanging = http.createServer(() => { reached = true; });
      hanging.listen(0, '127.0.0.1');
      await once(hanging, 'listening');
      let endpointId = '';
      try {
        const endpoint = await addWebhookEndpoint(endpointDeps, { tid: 'T-2002', url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/`, events: [], allowPrivate: true });
        endpointId = endpoint.id;
        await append('hanging', 'T-2002');
        const sender = delivery();
        const running = sender.runOnce();
        await waitFor(() => reached, { timeoutMs: 5000, message: 'the attempt reached the receiver' });
        sender.abort();
        await running;
        const row = await store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpoint.id).executeTakeFirstOrThrow();
        assert.equal(row.status, 'pending');
        // A failed attempt would be due after the backoff (now + 10 s on the fake clock), a timed-out one too.
        assert.ok(Number(row.next_attempt_at) <= now, 'due again at once, for the next instance up');
        assert.doesNotMatch(row.last_error ?? '', /timeout/i);
      } finally {
        hanging.closeAllConnections();
        hanging.close();
        await repository.removeEndpoint(endpointId);
      }
    });

    // item 5 of issue 19: https URLs to private addresses were taken and delivered to.
    test('without --allow-private no delivery connects to a private address: not at registration, not when a name later resolves to one (https too)', async () => {
      // Anything listening on this machine: it must see no connection at all.
      let connections = 0;
      const inside = net.createServer((socket) => { connections += 1; socket.destroy(); });
      inside.listen(0, '127.0.0.1');
      await once(inside, 'listening');
      const { port } = inside.address() as AddressInfo;
      // A resolver the test controls: this name is public at registration, then rebinds to 127.0.0.1.
      let rebound = false;
      const lookup: HostLookup = async (host) => {
        if (host === 'hooks.rebind.example') return [{ address: rebound ? '127.0.0.1' : '93.184.215.14', family: 4 }];
        if (host === 'loopback.example') return [{ address: '203.0.113.9', family: 4 }, { address: '127.0.0.1', family: 4 }];
        throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
      };
      const deps = { ...endpointDeps, lookup };
      const added: string[] = [];
      try {
        for (const url of [
          `https://127.0.0.1:${port}/`, `https://[::1]:${port}/`, 'https://169.254.169.254/latest/meta-data/', 'https://10.0.0.1/',
          'https://192.168.1.1/', 'https://100.64.0.1/', 'https://[fd00::1]/', 'https://[::ffff:127.0.0.1]/', 'https://metadata.google.internal/',
          `https://localhost:${port}/`, 'https://loopback.example/',
        ]) {
          await assert.rejects(addWebhookEndpoint(deps, { tid: 'T-2002', url, events: [] }),
            (error: Error & { code?: string }) => error.code === 'request.invalid' && /public addresses only/.test(error.message), url);
        }
        const rebinding = await addWebhookEndpoint(deps, { tid: 'T-2002', url: `https://hooks.rebind.example:${port}/`, events: [] });
        added.push(rebinding.id);
        assert.equal(rebinding.allowPrivate, undefined);
        rebound = true;
        // Endpoints stored before this check existed (or by hand): the delivery checks again.
        for (const url of [`https://127.0.0.1:${port}/`, `http://127.0.0.1:${port}/`, `https://[::ffff:7f00:1]:${port}/`]) {
          const id = `we_${randomBytes(12).toString('hex')}`;
          await repository.addEndpoint({ id, tid: 'T-2002', url, events: [], secretEnc: vault.encrypt('whsec_x'), createdAt: now, allowPrivate: false });
          added.push(id);
        }
        await append('private', 'T-2002');
        await delivery(lookup).runOnce();
        assert.equal(connections, 0, 'nothing reached the private address');
        const rows = await store.db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', 'in', added).execute();
        assert.equal(rows.length, added.length);
        for (const row of rows) {
          assert.equal(row.status, 'pending', 'retried later, as any failed attempt');
          assert.match(row.last_error ?? '', /not a public address/);
        }
        // Opted in, the same address is delivered to.
        const optedIn = await addWebhookEndpoint(deps, { tid: 'T-2002', url: `http://127.0.0.1:${port}/`, events: [], allowPrivate: true });
        added.push(optedIn.id);
        assert.equal(optedIn.allowPrivate, true);
        await append('opted-in', 'T-2002');
        await delivery(lookup).runOnce();
        assert.ok(connections > 0, 'an opted-in endpoint connects');
      } finally {
        inside.close();
        for (const id of added) await repository.removeEndpoint(id);
      }
    });

    test('a receiver that keeps failing is given up 24 hours after the event', async () => {
      receiver.status = 500;
      await append('never');
      const sender = delivery();
      for (let hour = 0; hour <= 25; hour++) {
        await sender.runOnce();
        now += 3_600_000;
      }
      receiver.status = 200;
      assert.equal((await repository.counts()).failed, 1);
      assert.equal((await repository.counts()).pending, 0);
    });
  });
}
