import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from './db.ts';
import { createMerchantRepository, type MerchantRepository } from './merchant-repository.ts';
import { createPaymentRepository, type NewPayment, type PaymentRepository } from './payment-repository.ts';
import { createRewardRepository, type RewardRepository } from './reward-repository.ts';
import type { NewWebhookEvent } from './webhook-repository.ts';

for (const factory of storeFactories) {
  describe(`payment repositories on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let merchants: MerchantRepository;
    let payments: PaymentRepository;
    let rewards: RewardRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      merchants = createMerchantRepository(store.db);
      payments = createPaymentRepository(store.db);
      rewards = createRewardRepository(store.db);
    });
    after(async () => { await dispose?.(); });

    const payment = (id: string, tranNo: string): NewPayment => ({
      id, tid: 'T1', tranNo, userUuid: 'u', settlementAddress: '0xS', network: 'ethereum', exchangeAmount: '100', exchangeCurrency: 'KRW',
    });

    test('a store is found by tid and by API key hash; a tid is registered once', async () => {
      const s = { tid: 'T1', name: 'Cafe', settlementAddress: '0xS', apiKeyHash: 'h1' };
      assert.equal(await merchants.insertStore(s, 1), true);
      assert.equal(await merchants.insertStore({ ...s, apiKeyHash: 'h2' }, 2), false);
      assert.deepEqual({ ...(await merchants.findStoreByApiKeyHash('h1')) }, { tid: 'T1', name: 'Cafe', settlementAddress: '0xS' });
      assert.equal(await merchants.findStoreByApiKeyHash('h2'), undefined);
    });

    test('rate notices get consecutive indexes per day and currency; the last one is in force', async () => {
      const published = await Promise.all([1, 2, 3, 4].map((i) => merchants.insertRateNotice({ currency: 'KRW', noticeDate: '20261122', rate: `${1000 + i}`, publishedAt: i })));
      assert.deepEqual(published.map((n) => n.noticeIndex).sort(), [1, 2, 3, 4]);
      await merchants.insertRateNotice({ currency: 'USD', noticeDate: '20261122', rate: '0.75', publishedAt: 10 });
      const inForce = await merchants.latestRateNotice('KRW');
      assert.equal(inForce?.publishedAt, 4);
      assert.equal((await merchants.latestRateNotice('USD'))?.noticeIndex, 1);
      assert.equal(await merchants.latestRateNotice('EUR'), undefined);
    });

    test('rate notices per token: a token\'s own notice is in force for it, VIXP\'s for VIXP; one index sequence per day and currency', async () => {
      const usdc = { network: 'ethereum', contractAddress: '0x00000000000000000000000000000000000000C1' };
      const usdcNotice = await merchants.insertRateNotice({ currency: 'KRW', token: usdc, noticeDate: '20261122', rate: '1380.25', publishedAt: 20 });
      assert.equal(usdcNotice.noticeIndex, 5, 'after the four KRW notices of VIXP that day');
      assert.deepEqual(usdcNotice.token, usdc);
      assert.equal((await merchants.latestRateNotice('KRW'))?.rate, '1004', 'VIXP\'s notice in force is unchanged by a later USDC one');
      assert.deepEqual((await merchants.latestRateNotice('KRW', { platformToken: true }))?.token, { platformToken: true });
      const inForce = await merchants.latestRateNotice('KRW', usdc);
      assert.deepEqual([inForce?.rate, inForce?.noticeIndex, inForce?.token], ['1380.25', 5, usdc]);
      assert.equal(await merchants.latestRateNotice('USD', usdc), undefined, 'USD/VIXP does not price USDC');
      assert.equal(await merchants.latestRateNotice('KRW', { network: 'optimism', contractAddress: usdc.contractAddress }), undefined, 'the same address on another network is another token');
    });

    test('approval numbers are handed out without gaps or repeats under concurrency', async () => {
      const numbers = await Promise.all(Array.from({ length: 20 }, () => merchants.nextNumber('approval:20261122')));
      assert.deepEqual([...numbers].sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 1));
      assert.equal(await merchants.nextNumber('approval:20261123'), 1);
    });

    test('a tran_no is claimed once; a failed attempt may be taken over; an approved one never', async () => {
      const outcomes = await Promise.all(['a', 'b', 'c'].map((id) => payments.claimTranNo(payment(id, 'N1'), 1)));
      assert.equal(outcomes.filter((o) => o.claimed).length, 1);
      const holder = (await payments.findByTranNo('T1', 'N1'))!;
      assert.equal(holder.status, 'pending');
      await payments.markFailed(holder.id, 'payment.expired', 2);
      assert.deepEqual(await payments.claimTranNo(payment('d', 'N1'), 3), { claimed: true });
      const retried = (await payments.findByTranNo('T1', 'N1'))!;
      assert.equal(retried.status, 'pending');
      assert.equal(retried.failureCode, null);
      await payments.markApproved(retried.id, { transferTransactionId: '0xT', approvalNo: 'A1', approvalDate: '20261122000000' }, 4);
      await payments.markFailed(retried.id, 'internal', 5);
      const again = await payments.claimTranNo(payment('e', 'N1'), 6);
      assert.equal(again.claimed, false);
      assert.equal(!again.claimed && again.existing.approvalNo, 'A1');
      assert.deepEqual((await payments.findApprovedByTransferTransaction('T1', '0xT')).map((p) => p.tranNo), ['N1']);
      assert.deepEqual(await payments.findApprovedByTransferTransaction('T2', '0xT'), [], 'another store finds nothing');
    });

    const approvedEvent = (tranNo: string, approvalNo: string): NewWebhookEvent => ({
      type: 'payment.approved', tid: 'T1', data: { tid: 'T1', tran_no: tranNo, approval_no: approvalNo },
    });
    const eventsOf = (tranNo: string) => store.db.selectFrom('webhook_events').select(['type', 'data'])
      .where('tid', '=', 'T1').where('data', 'like', `%"tran_no":"${tranNo}"%`).execute();

    test('a payment is approved once: a second settler\'s approval (another number) changes nothing and writes no second event', async () => {
      await payments.claimTranNo(payment('a1', 'N-APPROVE'), 1);
      const first = { transferTransactionId: '0xT1', approvalNo: 'A-FIRST', approvalDate: '20261122000001' };
      const second = { transferTransactionId: '0xT1', approvalNo: 'A-SECOND', approvalDate: '20261122000002' };
      assert.equal(await payments.markApproved('a1', first, 2, approvedEvent('N-APPROVE', first.approvalNo)), true);
      assert.equal(await payments.markApproved('a1', second, 3, approvedEvent('N-APPROVE', second.approvalNo)), false, 'an approved payment is not approved again');
      const record = (await payments.findByTranNo('T1', 'N-APPROVE'))!;
      assert.equal(record.status, 'approved');
      assert.equal(record.approvalNo, 'A-FIRST', 'the first approval number stands');
      assert.equal(record.updatedAt, 2);
      const events = await eventsOf('N-APPROVE');
      assert.deepEqual(events.map((e) => JSON.parse(e.data).approval_no), ['A-FIRST'], 'one payment.approved event');
      // A failed payment is not approved later either.
      await payments.claimTranNo(payment('a2', 'N-APPROVE-FAILED'), 4);
      await payments.markFailed('a2', 'payment.expired', 5);
      assert.equal(await payments.markApproved('a2', first, 6, approvedEvent('N-APPROVE-FAILED', 'A-LATE')), false);
      assert.equal((await payments.findByTranNo('T1', 'N-APPROVE-FAILED'))?.status, 'failed');
      assert.deepEqual(await eventsOf('N-APPROVE-FAILED'), []);
    });

    test('stale payments: pending ones untouched since before the bound, oldest first; approved and failed ones never', async () => {
      const mine = new Set(['s1', 's2', 's3', 's4']);
      await payments.claimTranNo(payment('s1', 'N-STALE-1'), 1001);
      await payments.claimTranNo(payment('s2', 'N-STALE-2'), 1000);
      await payments.claimTranNo(payment('s3', 'N-STALE-3'), 1000);
      await payments.claimTranNo(payment('s4', 'N-STALE-4'), 1000);
      await payments.markApproved('s3', { transferTransactionId: '0xT3', approvalNo: 'A-S3', approvalDate: '20261122000003' }, 1000);
      await payments.markFailed('s4', 'payment.expired', 1000);
      const stale = async (before: number) => (await payments.listStalePayments(before)).filter((p) => mine.has(p.id)).map((p) => p.id);
      assert.deepEqual(await stale(1000), [], 'untouched since before 1000: none (the bound is strict)');
      assert.deepEqual(await stale(1001), ['s2']);
      assert.deepEqual(await stale(1002), ['s2', 's1'], 'oldest first');
      const [first] = await payments.listStalePayments(1002);
      assert.equal(first?.status, 'pending');
    });

    test('a state change and its webhook event are one transaction: an event that cannot be written leaves the payment pending', async () => {
      await payments.claimTranNo(payment('o1', 'N-OUTBOX'), 1);
      const approval = { transferTransactionId: '0xT2', approvalNo: 'A-OUTBOX', approvalDate: '20261122000003' };
      // The outbox refuses this event (webhook_events.tid is NOT NULL), after the payment's update ran.
      const unwritable = { ...approvedEvent('N-OUTBOX', 'A-OUTBOX'), tid: null as unknown as string };
      await assert.rejects(payments.markApproved('o1', approval, 2, unwritable));
      const record = (await payments.findByTranNo('T1', 'N-OUTBOX'))!;
      assert.equal(record.status, 'pending', 'the approval was rolled back with its event');
      assert.equal(record.approvalNo, null);
      // Written together, both are kept.
      assert.equal(await payments.markApproved('o1', approval, 3, approvedEvent('N-OUTBOX', 'A-OUTBOX')), true);
      assert.equal((await payments.findByTranNo('T1', 'N-OUTBOX'))?.status, 'approved');
      assert.equal((await eventsOf('N-OUTBOX')).length, 1);
    });

    test('a refund reservation is compare-and-set with its cancellation; a failed one gives its amount back once', async () => {
      await payments.claimTranNo(payment('r', 'N2'), 1);
      const results = await Promise.all([
        payments.reserveRefund('r', '0', '5', { id: 'c5', tokenAmount: '5', exchangeAmount: null }, 2),
        payments.reserveRefund('r', '0', '7', { id: 'c7', tokenAmount: '7', exchangeAmount: null }, 2),
      ]);
      assert.deepEqual(results.filter(Boolean).length, 1);
      const [won, lost] = results[0] ? ['c5', 'c7'] : ['c7', 'c5'];
      assert.equal(await payments.findCancellation(lost), undefined, 'the losing reservation wrote no cancellation');
      assert.equal((await payments.findCancellation(won))?.status, 'pending');
      assert.equal(await payments.reserveRefund('r', (await payments.findPayment('r'))!.refundedAmount, '10', { id: 'c3', tokenAmount: (10 - Number(won.slice(1))).toString(), exchangeAmount: null }, 3), true);
      assert.deepEqual((await payments.listStaleCancellations(3)).map((c) => c.id), [won], 'pending and untouched since before 3');
      assert.equal(await payments.failCancellation(won, 4), true);
      assert.equal(await payments.failCancellation(won, 5), false, 'a cancellation fails once');
      assert.equal((await payments.findPayment('r'))?.refundedAmount, (10 - Number(won.slice(1))).toString(), 'its amount is refundable again, once');
      assert.equal(await payments.completeCancellation(won, { transferTransactionId: '0xT', cancelNo: 'C1', cancelDate: 'd' }, 6), false, 'a failed cancellation never completes');
      assert.equal(await payments.completeCancellation('c3', { transferTransactionId: '0xT', cancelNo: 'C1', cancelDate: 'd' }, 6), true);
    });

    test('a reward is issued once per tid and reason; a claim transition happens once', async () => {
      const reward = {
        id: 'R1', tid: 'T1', rewardReason: 'visit', network: 'ethereum', settlementAddress: '0xS', contractAddress: '0xC', tokenSymbol: 'VIXP',
        tokenAmount: '1', exchangeAmount: '1000', exchangeCurrency: 'KRW', exchangeRate: '1000', exchangeDateIndex: '2026112200001',
        rewardDate: '20261122000000', expiresAt: 100, createdAt: 1, updatedAt: 1,
      };
      assert.equal((await rewards.insertReward(reward)).inserted, true);
      const second = await rewards.insertReward({ ...reward, id: 'R2' });
      assert.equal(second.inserted, false);
      assert.equal(second.reward.id, 'R1');
      const claims = await Promise.all([1, 2, 3].map(() => rewards.transition('R1', 'issued', 'claiming', { userAddress: '0xU' }, 2)));
      assert.equal(claims.filter(Boolean).length, 1);
      assert.equal((await rewards.findReward('R1'))?.status, 'claiming');
      assert.equal((await rewards.findReward('R1'))?.userAddress, '0xU');
    });
  });
}
