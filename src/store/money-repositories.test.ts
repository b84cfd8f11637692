import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { storeFactories } from '../../test/support/store-factories.ts';
import type { Store } from './db.ts';
import { createAuthorizationRepository, type AuthorizationRecord, type AuthorizationRepository } from './authorization-repository.ts';
import { createIdempotencyRepository, type IdempotencyRepository } from './idempotency-repository.ts';
import { createPaymentRepository, type NewPayment, type PaymentRepository } from './payment-repository.ts';
import { createRewardRepository, type NewReward, type RewardRepository } from './reward-repository.ts';
import { createWalletRepository, type WalletRepository } from './wallet-repository.ts';
import { createX402SettlementRepository, type X402SettlementRepository } from './x402-settlement-repository.ts';
import type { NewWebhookEvent } from './webhook-repository.ts';

// The records the money repositories keep, as their users read them back: every field of what was
// written, compare-and-set outcomes, the order of lists and the edges of time windows. Both dialects
// (npm test); the StrykerJS store area runs the SQLite half (stryker/store.conf.json).

for (const factory of storeFactories) {
  describe(`money repositories on ${factory.name}`, () => {
    let store: Store;
    let dispose: () => Promise<void>;
    let payments: PaymentRepository;
    let rewards: RewardRepository;
    let idempotency: IdempotencyRepository;
    let x402: X402SettlementRepository;
    let wallet: WalletRepository;
    let authorizations: AuthorizationRepository;
    before(async () => {
      ({ store, dispose } = await factory.open());
      payments = createPaymentRepository(store.db);
      rewards = createRewardRepository(store.db);
      idempotency = createIdempotencyRepository(store.db);
      x402 = createX402SettlementRepository(store.db);
      wallet = createWalletRepository(store.db);
      authorizations = createAuthorizationRepository(store.db, factory.name === 'sqlite' ? 'process' : 'row');
    });
    after(async () => { await dispose?.(); });

    const eventsOf = async (tid: string) => (await store.db.selectFrom('webhook_events').select(['type', 'data', 'created_at'])
      .where('tid', '=', tid).orderBy('created_at').execute()).map((e) => ({ type: e.type, data: JSON.parse(e.data) as unknown, at: Number(e.created_at) }));

    describe('payments', () => {
      const payment = (id: string, tid: string, tranNo: string, runBy?: string): NewPayment => ({
        id, tid, tranNo, userUuid: `user-${id}`, settlementAddress: '0xSettle', network: 'ethereum', exchangeAmount: '1500', exchangeCurrency: 'KRW',
        ...(runBy !== undefined && { runBy }),
      });
      const pendingRecord = (p: NewPayment, now: number) => ({
        id: p.id, tid: p.tid, tranNo: p.tranNo, status: 'pending', userUuid: p.userUuid, userAddress: null, settlementAddress: p.settlementAddress,
        network: p.network, contractAddress: null, tokenSymbol: null, tokenAmount: null, exchangeAmount: p.exchangeAmount, exchangeCurrency: p.exchangeCurrency,
        exchangeRate: null, exchangeDateIndex: null, transferTransactionId: null, approvalNo: null, approvalDate: null, refundedAmount: '0',
        failureCode: null, updatedAt: now, runBy: p.runBy ?? null,
      });
      const quote = { userAddress: '0xUser', contractAddress: '0xToken', tokenSymbol: 'VIXP', tokenAmount: '1500000000000000000', exchangeRate: '1000', exchangeDateIndex: '2026112200001' };

      test('a claimed tran_no is a pending payment with every field as given; the quote and the approval are recorded as given', async () => {
        const p = payment('p-rec', 'T-REC', 'N1', 'desk-7');
        assert.deepEqual(await payments.claimTranNo(p, 10), { claimed: true });
        assert.deepEqual(await payments.findByTranNo('T-REC', 'N1'), pendingRecord(p, 10));
        assert.deepEqual(await payments.findPayment('p-rec'), pendingRecord(p, 10));
        const withoutDesk = payment('p-rec2', 'T-REC', 'N2');
        await payments.claimTranNo(withoutDesk, 11);
        assert.equal((await payments.findPayment('p-rec2'))?.runBy, null);
        assert.equal(await payments.findByTranNo('T-REC', 'N3'), undefined);
        assert.equal(await payments.findByTranNo('T-OTHER', 'N1'), undefined, 'a tran_no is its store\'s');

        await payments.recordQuote('p-rec', quote, 12);
        assert.deepEqual(await payments.findPayment('p-rec'), { ...pendingRecord(p, 12), ...quote });
        const approval = { transferTransactionId: '0xTx', approvalNo: '00000001', approvalDate: '20261122093000' };
        assert.equal(await payments.markApproved('p-rec', approval, 13), true);
        assert.deepEqual(await payments.findPayment('p-rec'), { ...pendingRecord(p, 13), ...quote, ...approval, status: 'approved' });
        // An approved payment does not fail; no payment.failed event is written for it.
        await payments.markFailed('p-rec', 'internal', 14, { type: 'payment.failed', tid: 'T-REC', data: { tran_no: 'N1' } });
        assert.deepEqual(await payments.findPayment('p-rec'), { ...pendingRecord(p, 13), ...quote, ...approval, status: 'approved' });
        assert.deepEqual(await eventsOf('T-REC'), []);
        // A pending one fails with its code, and its event is written with it.
        await payments.markFailed('p-rec2', 'payment.expired', 15, { type: 'payment.failed', tid: 'T-REC', data: { tran_no: 'N2' } });
        assert.deepEqual(await payments.findPayment('p-rec2'), { ...pendingRecord(withoutDesk, 15), status: 'failed', failureCode: 'payment.expired' });
        assert.deepEqual(await eventsOf('T-REC'), [{ type: 'payment.failed', data: { tran_no: 'N2' }, at: 15 }]);
      });

      test('a failed attempt is taken over by one of three concurrent retries, as the winner\'s new pending attempt', async () => {
        await payments.claimTranNo(payment('t-0', 'T-TAKE', 'N1', 'desk-1'), 1);
        await payments.markFailed('t-0', 'wallet.insufficient_balance', 2);
        const retries = ['t-1', 't-2', 't-3'].map((id) => payment(id, 'T-TAKE', 'N1', `desk-${id}`));
        const outcomes = await Promise.all(retries.map((p) => payments.claimTranNo(p, 3)));
        assert.equal(outcomes.filter((o) => o.claimed).length, 1, JSON.stringify(outcomes));
        const winner = retries[outcomes.findIndex((o) => o.claimed)]!;
        assert.deepEqual(await payments.findByTranNo('T-TAKE', 'N1'), pendingRecord(winner, 3), 'the failure code is gone, the attempt is the winner\'s');
        for (const outcome of outcomes) if (!outcome.claimed) assert.equal(outcome.existing.id, winner.id);
      });

      test('the approved payments of a transaction are the store\'s, oldest first, then by id', async () => {
        const approval = (n: string) => ({ transferTransactionId: '0xBatch', approvalNo: n, approvalDate: '20261122000000' });
        for (const [id, tranNo, at] of [['b-3', 'N3', 30], ['b-1', 'N1', 20], ['b-2', 'N2', 20], ['b-4', 'N4', 10]] as const) {
          await payments.claimTranNo(payment(id, 'T-BATCH', tranNo), at);
        }
        for (const id of ['b-3', 'b-1', 'b-2']) assert.equal(await payments.markApproved(id, approval(id), 40), true);
        await payments.markFailed('b-4', 'internal', 40);
        await payments.claimTranNo(payment('b-5', 'T-BATCH-2', 'N1'), 5);
        await payments.markApproved('b-5', approval('b-5'), 40);
        assert.deepEqual((await payments.findApprovedByTransferTransaction('T-BATCH', '0xBatch')).map((p) => p.id), ['b-1', 'b-2', 'b-3']);
        assert.deepEqual(await payments.findApprovedByTransferTransaction('T-BATCH', '0xOther'), []);
      });

      test('refunds: a lost compare-and-set writes nothing; a cancellation is recorded as given, completed once, failed back by exactly its amount', async () => {
        await payments.claimTranNo(payment('r-1', 'T-REFUND', 'N1'), 1);
        const cancellation = (id: string, tokenAmount: string) => ({ id, tokenAmount, exchangeAmount: tokenAmount === '4' ? '400' : null });
        assert.equal(await payments.reserveRefund('r-1', '0', '4', cancellation('c-4', '4'), 2), true);
        assert.deepEqual(await payments.findCancellation('c-4'), {
          id: 'c-4', paymentId: 'r-1', status: 'pending', tokenAmount: '4', exchangeAmount: '400', transferTransactionId: null, cancelNo: null, cancelDate: null, updatedAt: 2,
        });
        assert.equal(await payments.reserveRefund('r-1', '0', '6', cancellation('c-lost', '6'), 3), false, 'the total is 4 now, not 0');
        assert.equal(await payments.findCancellation('c-lost'), undefined);
        assert.equal((await payments.findPayment('r-1'))?.refundedAmount, '4');
        assert.equal((await payments.findPayment('r-1'))?.updatedAt, 2);
        assert.equal(await payments.reserveRefund('r-1', '4', '10', cancellation('c-6', '6'), 4), true);
        assert.equal(await payments.reserveRefund('r-1', '10', '11', cancellation('c-1', '1'), 5), true);
        assert.deepEqual((await payments.findPayment('r-1'))?.refundedAmount, '11');

        // Pending cancellations untouched since before the edge are stale, oldest first; the edge itself is not.
        assert.deepEqual((await payments.listStaleCancellations(4)).map((c) => c.id), ['c-4']);
        assert.deepEqual((await payments.listStaleCancellations(6)).map((c) => c.id), ['c-4', 'c-6', 'c-1']);

        const done = { transferTransactionId: '0xRefund', cancelNo: '00000009', cancelDate: '20261122100000' };
        assert.equal(await payments.completeCancellation('c-6', done, 7, { type: 'payment.canceled', tid: 'T-REFUND', data: { cancel_no: '00000009' } }), true);
        assert.deepEqual(await payments.findCancellation('c-6'), { id: 'c-6', paymentId: 'r-1', status: 'done', tokenAmount: '6', exchangeAmount: null, ...done, updatedAt: 7 });
        assert.equal(await payments.completeCancellation('c-6', { ...done, cancelNo: 'other' }, 8, { type: 'payment.canceled', tid: 'T-REFUND', data: { cancel_no: 'other' } }), false);
        assert.equal((await payments.findCancellation('c-6'))?.cancelNo, '00000009');
        assert.equal(await payments.failCancellation('c-6', 8), false, 'a done cancellation does not fail');
        assert.deepEqual(await eventsOf('T-REFUND'), [{ type: 'payment.canceled', data: { cancel_no: '00000009' }, at: 7 }]);

        assert.equal(await payments.failCancellation('c-4', 9), true);
        assert.deepEqual(await payments.findCancellation('c-4'), {
          id: 'c-4', paymentId: 'r-1', status: 'failed', tokenAmount: '4', exchangeAmount: '400', transferTransactionId: null, cancelNo: null, cancelDate: null, updatedAt: 9,
        });
        assert.equal((await payments.findPayment('r-1'))?.refundedAmount, '7', '11 less the 4 of the failed one');
        assert.equal((await payments.findPayment('r-1'))?.updatedAt, 9);
        assert.equal(await payments.failCancellation('c-missing', 10), false);
        assert.deepEqual((await payments.listStaleCancellations(100)).map((c) => c.id), ['c-1'], 'done and failed ones are not stale');
        assert.deepEqual((await payments.listCancellations('r-1')).map((c) => c.id), ['c-6'], 'a payment\'s cancellations are its done ones');
        assert.deepEqual(await payments.listCancellations('r-missing'), []);
      });
    });

    describe('rewards', () => {
      const newReward = (id: string, reason: string, createdAt: number): NewReward => ({
        id, tid: 'T-RW', rewardReason: reason, network: 'ethereum', settlementAddress: '0xSettle', contractAddress: '0xToken', tokenSymbol: 'VIXP',
        tokenAmount: '2000000000000000000', exchangeAmount: '2000', exchangeCurrency: 'KRW', exchangeRate: '1000', exchangeDateIndex: '2026112200001',
        rewardDate: '20261122000000', expiresAt: 1_000_000, createdAt, updatedAt: createdAt,
      });
      const issued = (r: NewReward) => ({
        ...r, status: 'issued', userAddress: null, claimTransactionId: null, claimedAt: null, cancelNo: null, cancelDate: null, cancelTransactionId: null,
      });
      const issuedEvent = (id: string): NewWebhookEvent => ({ type: 'reward.issued', tid: 'T-RW', data: { reward_id: id } });

      test('a reward is recorded as given, once per reason (one reward.issued event); each change of a move is written, the others kept', async () => {
        const r = newReward('rw-1', 'visit', 5);
        assert.deepEqual(await rewards.insertReward(r, issuedEvent('rw-1')), { inserted: true, reward: issued(r) });
        assert.deepEqual(await rewards.insertReward(newReward('rw-2', 'visit', 6), issuedEvent('rw-2')), { inserted: false, reward: issued(r) });
        assert.equal(await rewards.findReward('rw-2'), undefined);
        assert.deepEqual(await rewards.findReward('rw-1'), issued(r));

        assert.equal(await rewards.transition('rw-1', 'issued', 'claiming', { userAddress: '0xUser' }, 7), true);
        assert.deepEqual(await rewards.findReward('rw-1'), { ...issued(r), status: 'claiming', userAddress: '0xUser', updatedAt: 7 });
        assert.equal(await rewards.transition('rw-1', 'issued', 'canceling', {}, 8, { type: 'reward.canceled', tid: 'T-RW', data: { reward_id: 'rw-1' } }), false);
        assert.equal(await rewards.transition('rw-1', 'claiming', 'claimed', { claimTransactionId: '0xClaim', claimedAt: 9 }, 9,
          { type: 'reward.claimed', tid: 'T-RW', data: { reward_id: 'rw-1' } }), true);
        assert.deepEqual(await rewards.findReward('rw-1'), {
          ...issued(r), status: 'claimed', userAddress: '0xUser', claimTransactionId: '0xClaim', claimedAt: 9, updatedAt: 9,
        });
        assert.deepEqual((await eventsOf('T-RW')).map((e) => [e.type, e.at]), [['reward.issued', 5], ['reward.claimed', 9]]);

        const c = newReward('rw-3', 'birthday', 10);
        await rewards.insertReward(c);
        assert.equal(await rewards.transition('rw-3', 'issued', 'canceling', { cancelNo: '00000003', cancelDate: '20261122120000' }, 11), true);
        assert.equal(await rewards.transition('rw-3', 'canceling', 'canceled', { cancelTransactionId: '0xGiveBack' }, 12), true);
        assert.deepEqual(await rewards.findReward('rw-3'), {
          ...issued(c), status: 'canceled', cancelNo: '00000003', cancelDate: '20261122120000', cancelTransactionId: '0xGiveBack', updatedAt: 12,
        });
        assert.equal(await rewards.findReward('rw-missing'), undefined);
      });

      test('stale rewards are those mid-claim or mid-cancellation untouched since before the edge, least recently touched first', async () => {
        const at = async (id: string, to: 'claiming' | 'canceling' | 'issued', updatedAt: number) => {
          await rewards.insertReward(newReward(id, `stale-${id}`, 1));
          if (to !== 'issued') assert.equal(await rewards.transition(id, 'issued', to, {}, updatedAt), true);
        };
        await at('s-1', 'canceling', 300);
        await at('s-2', 'claiming', 100);
        await at('s-3', 'claiming', 200);
        await at('s-4', 'issued', 0);
        const stale = async (before: number) => (await rewards.listStale(before)).map((r) => r.id).filter((id) => id.startsWith('s-'));
        assert.deepEqual(await stale(300), ['s-2', 's-3']);
        assert.deepEqual(await stale(301), ['s-2', 's-3', 's-1']);
      });
    });

    describe('idempotency keys', () => {
      const key = (k: string, createdAt: number, expiresAt: number) => ({ scope: 'pay:u1', key: k, fingerprint: `f-${k}`, reference: `ref-${k}`, createdAt, expiresAt });

      test('a key is claimed once, as running with what was given; it is swept and claimed anew only from its expiry on', async () => {
        assert.deepEqual(await idempotency.claim(key('k1', 10, 100)), { claimed: true });
        const running = { scope: 'pay:u1', key: 'k1', fingerprint: 'f-k1', state: 'running', reference: 'ref-k1', outcome: null, createdAt: 10, updatedAt: 10, expiresAt: 100 };
        assert.deepEqual(await idempotency.find('pay:u1', 'k1'), running);
        assert.deepEqual(await idempotency.claim({ ...key('k1', 99, 200), fingerprint: 'other' }), { claimed: false, existing: running });
        assert.deepEqual(await idempotency.claim({ ...key('k1', 100, 200), fingerprint: 'new' }), { claimed: true }, 'expired at its expiry time');
        assert.equal((await idempotency.find('pay:u1', 'k1'))?.fingerprint, 'new');
        assert.equal(await idempotency.find('pay:u2', 'k1'), undefined, 'a key is its scope\'s');
        assert.deepEqual(await idempotency.claim({ ...key('k1', 100, 200), scope: 'pay:u2' }), { claimed: true });
      });

      test('retake is compare-and-set on a running key\'s updatedAt; record and release change only their key', async () => {
        await idempotency.claim(key('k2', 10, 1_000));
        await idempotency.claim(key('k3', 10, 1_000));
        assert.equal(await idempotency.retake('pay:u1', 'k2', 9, 'ref-late', 20), false, 'not the updatedAt it read');
        assert.equal(await idempotency.retake('pay:u1', 'k2', 10, 'ref-2b', 20), true);
        assert.equal(await idempotency.retake('pay:u1', 'k2', 10, 'ref-2c', 21), false, 'taken over already');
        assert.deepEqual(await idempotency.find('pay:u1', 'k2'), {
          scope: 'pay:u1', key: 'k2', fingerprint: 'f-k2', state: 'running', reference: 'ref-2b', outcome: null, createdAt: 10, updatedAt: 20, expiresAt: 1_000,
        });
        await idempotency.record('pay:u1', 'k2', 'pending', '{"tx":"0x1"}', 30);
        assert.equal(await idempotency.retake('pay:u1', 'k2', 30, 'ref-2d', 31), false, 'only a running key is taken over');
        assert.deepEqual(await idempotency.find('pay:u1', 'k2'), {
          scope: 'pay:u1', key: 'k2', fingerprint: 'f-k2', state: 'pending', reference: 'ref-2b', outcome: '{"tx":"0x1"}', createdAt: 10, updatedAt: 30, expiresAt: 1_000,
        });
        assert.equal((await idempotency.find('pay:u1', 'k3'))?.state, 'running', 'another key is untouched');
        await idempotency.release('pay:u1', 'k2');
        assert.equal((await idempotency.find('pay:u1', 'k2'))?.state, 'pending', 'a key whose operation started is not released');
        await idempotency.release('pay:u1', 'k3');
        assert.equal(await idempotency.find('pay:u1', 'k3'), undefined);
      });

      test('the sweep deletes the keys expired before now, answering how many', async () => {
        await idempotency.claim({ ...key('e1', 1, 500), scope: 'sweep' });
        await idempotency.claim({ ...key('e2', 1, 501), scope: 'sweep' });
        await idempotency.claim({ ...key('e3', 1, 499), scope: 'sweep' });
        const swept = await idempotency.sweepExpired(501);
        assert.ok(swept >= 2, `swept ${swept}`);
        assert.equal(await idempotency.find('sweep', 'e1'), undefined);
        assert.equal(await idempotency.find('sweep', 'e3'), undefined);
        assert.equal((await idempotency.find('sweep', 'e2'))?.expiresAt, 501, 'expiring at now: kept');
        assert.equal(await idempotency.sweepExpired(501), 0);
        assert.equal(await idempotency.sweepExpired(502), 1);
      });
    });

    describe('x402 settlements', () => {
      const payer = '0x70997970C51812dc3A010C7d01b50e0d17dc79C8';
      const accepted = (id: string, nonce: string, createdAt: number, validAfter?: string) => ({
        id, nonce, network: id.split(':')[0]!, payer, payTo: '0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', asset: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
        amount: '10000', validBefore: '1900000000', signature: '0xsig', keyId: 'key-1', createdAt, updatedAt: createdAt, ...(validAfter !== undefined && { validAfter }),
      });
      const record = (r: ReturnType<typeof accepted>) => ({ validAfter: '0', ...r, status: 'accepted', txHash: null, errorReason: null });

      test('accepted once, read back as given (validAfter 0 when omitted); ended once, with its one event', async () => {
        const a = accepted('ethereum:t:p:0x01', '0x01', 1_000);
        assert.equal(await x402.accept(a), true);
        assert.equal(await x402.accept({ ...a, amount: '1' }), false);
        assert.deepEqual(await x402.find(a.id), record(a));
        const b = accepted('bnb:t:p:0x01', '0x01', 2_000, '1700000000');
        assert.equal(await x402.accept(b), true);
        assert.deepEqual(await x402.find(b.id), record(b));
        assert.equal(await x402.find('missing'), undefined);
        assert.deepEqual((await x402.findByPayerNonce(payer, '0x01')).map((r) => r.id), [b.id, a.id], 'newest first');
        assert.deepEqual(await x402.findByPayerNonce(payer, '0x02'), []);
        assert.deepEqual(await x402.findByPayerNonce('0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC', '0x01'), []);

        const settled = { type: 'x402.settled', tid: 'T-X402', data: { id: a.id } } as const;
        assert.equal(await x402.finish(a.id, { status: 'settled', txHash: '0xMined' }, 3_000, settled), true);
        assert.equal(await x402.finish(a.id, { status: 'failed', errorReason: 'late' }, 3_001, { ...settled, type: 'x402.failed' }), false);
        assert.deepEqual(await x402.find(a.id), { ...record(a), status: 'settled', txHash: '0xMined', updatedAt: 3_000 });
        assert.equal(await x402.finish(b.id, { status: 'failed', errorReason: 'invalid_signature' }, 3_002), true);
        assert.deepEqual(await x402.find(b.id), { ...record(b), status: 'failed', errorReason: 'invalid_signature', updatedAt: 3_002 });
        assert.deepEqual((await eventsOf('T-X402')).map((e) => [e.type, e.at]), [['x402.settled', 3_000]]);
      });

      test('those still accepted before the edge, oldest first and as many as asked; the console\'s counts since an instant', async () => {
        for (const [n, at] of [[3, 5_300], [1, 5_100], [2, 5_200], [4, 5_400]] as const) assert.equal(await x402.accept(accepted(`base:t:p:0x1${n}`, `0x1${n}`, at)), true);
        await x402.finish('base:t:p:0x11', { status: 'settled', txHash: '0x11' }, 6_000);
        const ids = async (before: number, limit: number) => (await x402.listAccepted(before, limit)).map((r) => r.id).filter((id) => id.startsWith('base:'));
        assert.deepEqual(await ids(5_400, 10), ['base:t:p:0x12', 'base:t:p:0x13'], 'the settled one and the one at the edge are not');
        assert.deepEqual(await ids(5_401, 10), ['base:t:p:0x12', 'base:t:p:0x13', 'base:t:p:0x14']);
        assert.equal((await x402.listAccepted(1_000_000, 1)).length, 1);
        assert.deepEqual(await x402.countSince(5_100), { accepted: 3, settled: 1, failed: 0 });
        assert.deepEqual(await x402.countSince(5_101), { accepted: 3, settled: 0, failed: 0 });
        assert.deepEqual(await x402.countSince(1_000_000), { accepted: 0, settled: 0, failed: 0 });
      });
    });

    describe('temp keys and tokens', () => {
      test('the dead temp keys are deleted: unused ones from their expiry on, used ones used before the edge; how many is answered', async () => {
        const address = '0x0000000000000000000000000000000000000D0D';
        await wallet.insertAccount({ address, privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
        const keys: Array<[string, number, number | null]> = [['d-expired', 1_000, null], ['d-live', 1_001, null], ['d-used-old', 5_000, 499], ['d-used-new', 5_000, 500]];
        for (const [hash, expiresAt, usedAt] of keys) {
          assert.equal(await wallet.insertTempKeyForAccount({ keyHash: hash, address, keyType: 'transfer', expiresAt }, 0), true);
          if (usedAt !== null) assert.equal(await wallet.consumeTempKey(hash, usedAt), true);
        }
        assert.equal(await wallet.deleteDeadTempKeys(1_000, 500), 2);
        const left = await Promise.all(keys.map(async ([hash]) => (await wallet.findTempKey(hash))?.keyHash));
        assert.deepEqual(left, [undefined, 'd-live', undefined, 'd-used-new']);
        assert.deepEqual(await wallet.findTempKey('d-used-new'), { keyHash: 'd-used-new', address, keyType: 'transfer', expiresAt: 5_000, usedAt: 500 });
        assert.equal(await wallet.consumeTempKey('d-live', 1_000), true, 'live until its expiry');
      });

      test('a symbol names the first token registered with it', async () => {
        const token = (contract: string, createdAt: number) => ({ network: 'base', contract_address: contract, symbol: 'DUP', name: contract, decimals: 6, owner: '0xO', created_at: createdAt });
        await wallet.insertToken(token('0xLater', 20));
        await wallet.insertToken(token('0xFirst', 10));
        assert.equal((await wallet.findTokenBySymbol('base', 'DUP'))?.contract_address, '0xFirst');
        assert.equal(await wallet.findTokenBySymbol('ethereum', 'DUP'), undefined);
      });
    });

    describe('authorizations', () => {
      let accounts = 0;
      const newAccount = async () => {
        const address = `0x${(++accounts).toString(16).padStart(40, 'b')}`;
        await wallet.insertAccount({ address, privateKeyEnc: 'v1:a', secretKeyEnc: 'v1:b' }, 0);
        return address;
      };
      let sequence = 0;
      const authorization = (from: string, value: bigint, createdAt: number, overrides: Partial<AuthorizationRecord> = {}) => {
        const n = ++sequence;
        return {
          nonce: `0x${n.toString(16).padStart(64, '0')}`, network: 'ethereum', reference: `transfer:${n}`, contractAddress: '0xC', fromAddress: from,
          toAddress: '0xTo', value: value.toString(), validBefore: 10_000 + n, fromBlock: 7, createdAt, updatedAt: createdAt, ...overrides,
        };
      };
      const reserved = (a: ReturnType<typeof authorization>) => ({ chainNonce: a.nonce, ...a, status: 'reserved', txHash: null, cancelTxHash: null });

      test('a reservation is recorded as given (its chain nonce is its key unless named); a nonce or a network\'s reference is reserved once', async () => {
        const from = await newAccount();
        const balance = async () => 100n;
        const a = authorization(from, 5n, 1_000);
        assert.equal(await authorizations.reserve(a, { balance }), 'reserved');
        assert.deepEqual(await authorizations.find(a.nonce), reserved(a));
        const outside = authorization(from, 5n, 1_001, { nonce: 'ethereum:0xc:payer:0xabc', chainNonce: '0xabc' });
        assert.equal(await authorizations.reserve(outside, { balance }), 'reserved');
        assert.deepEqual(await authorizations.find(outside.nonce), reserved(outside));
        assert.equal(await authorizations.reserve({ ...authorization(from, 1n, 1_002), nonce: a.nonce }, { balance }), 'duplicate');
        assert.equal(await authorizations.reserve({ ...authorization(from, 1n, 1_002), reference: a.reference }, { balance }), 'duplicate');
        const otherNetwork = { ...authorization(from, 1n, 1_002), reference: a.reference, network: 'bnb' };
        assert.equal(await authorizations.reserve(otherNetwork, { balance }), 'reserved', 'a reference is unique per network');
        assert.equal(await authorizations.find('0xmissing'), undefined);
      });

      test('a reference voided before any reservation is never reserved after; one already reserved is not voided', async () => {
        const from = await newAccount();
        const balance = async () => 100n;
        const a = authorization(from, 5n, 3_000);
        assert.equal(await authorizations.voidReference('ethereum', a.reference, 3_001), true);
        assert.deepEqual(await authorizations.findByReference('ethereum', a.reference), {
          nonce: `ethereum:void:${a.reference}`, chainNonce: `ethereum:void:${a.reference}`, network: 'ethereum', reference: a.reference, contractAddress: '', fromAddress: '', toAddress: '',
          value: '0', validBefore: 0, fromBlock: 0, status: 'void', txHash: null, cancelTxHash: null, createdAt: 3_001, updatedAt: 3_001,
        });
        assert.equal(await authorizations.voidReference('ethereum', a.reference, 3_002), false, 'once');
        assert.equal(await authorizations.reserve(a, { balance }), 'duplicate');
        assert.equal(await authorizations.find(a.nonce), undefined);
        const b = authorization(from, 5n, 3_003);
        assert.equal(await authorizations.reserve(b, { balance }), 'reserved');
        assert.equal(await authorizations.voidReference('ethereum', b.reference, 3_004), false);
        assert.equal((await authorizations.find(b.nonce))?.status, 'reserved');
        assert.equal(await authorizations.voidReference('bnb', b.reference, 3_004), true, 'a reference is voided per network');
        assert.equal(await authorizations.held({ network: 'ethereum', contractAddress: '0xC', fromAddress: from }), 5n, 'a void row holds nothing');
      });

      test('funds held: open authorizations of the account in the token; a reservation covering exactly the rest is made, one more unit is not', async () => {
        const from = await newAccount();
        const other = await newAccount();
        const a = authorization(from, 30n, 2_000);
        const b = authorization(from, 20n, 2_000);
        assert.equal(await authorizations.reserve(a, { balance: async () => 100n }), 'reserved');
        assert.equal(await authorizations.reserve(b, { balance: async () => 100n }), 'reserved');
        await authorizations.reserve(authorization(other, 40n, 2_000), { balance: async () => 100n });
        await authorizations.reserve(authorization(from, 40n, 2_000, { contractAddress: '0xOtherToken' }), { balance: async () => 100n });
        await authorizations.reserve(authorization(from, 40n, 2_000, { network: 'bnb' }), { balance: async () => 100n });
        const account = { network: 'ethereum', contractAddress: '0xC', fromAddress: from };
        assert.equal(await authorizations.held(account), 50n);
        // b canceled: no longer held; a submitted: still held.
        await store.db.updateTable('authorizations').set({ status: 'submitted' }).where('nonce', '=', a.nonce).execute();
        assert.equal(await authorizations.finish(b.nonce, 'canceled', { cancelTxHash: '0xCancel' }, 2_100), true);
        assert.equal(await authorizations.held(account), 30n);
        assert.equal(await authorizations.reserve(authorization(from, 71n, 500_000), { balance: async () => 100n }), 'insufficient');
        assert.equal(await authorizations.reserve(authorization(from, 70n, 500_000), { balance: async () => 100n }), 'reserved');
        assert.equal(await authorizations.held(account), 100n);
      });

      test('finish ends an open authorization once, writing the hashes it is given and keeping the others', async () => {
        const from = await newAccount();
        const a = authorization(from, 1n, 3_000);
        await authorizations.reserve(a, { balance: async () => 10n });
        await store.db.updateTable('authorizations').set({ status: 'submitted', tx_hash: '0xSent' }).where('nonce', '=', a.nonce).execute();
        assert.equal(await authorizations.finish(a.nonce, 'canceled', { cancelTxHash: '0xCancel' }, 3_100), true);
        assert.deepEqual(await authorizations.find(a.nonce), { ...reserved(a), status: 'canceled', txHash: '0xSent', cancelTxHash: '0xCancel', updatedAt: 3_100 });
        assert.equal(await authorizations.finish(a.nonce, 'used', { txHash: '0xLate' }, 3_200), false);
        assert.equal((await authorizations.find(a.nonce))?.status, 'canceled');
        const b = authorization(from, 1n, 3_000);
        await authorizations.reserve(b, { balance: async () => 10n });
        assert.equal(await authorizations.finish(b.nonce, 'used', { txHash: '0xMined' }, 3_300), true);
        assert.deepEqual(await authorizations.find(b.nonce), { ...reserved(b), status: 'used', txHash: '0xMined', updatedAt: 3_300 });
        assert.equal(await authorizations.finish('0xmissing', 'used', {}, 3_300), false);
      });

      test('release deletes a reservation never sent and gives its temp key back; nothing once it is sent', async () => {
        const from = await newAccount();
        await wallet.insertTempKeyForAccount({ keyHash: `rel-${from}`, address: from, keyType: 'transfer', expiresAt: 10_000 }, 0);
        await wallet.insertTempKeyForAccount({ keyHash: `rel2-${from}`, address: from, keyType: 'transfer', expiresAt: 10_000 }, 0);
        const a = authorization(from, 4n, 4_000);
        assert.equal(await authorizations.reserve(a, { balance: async () => 4n, consumeTempKey: `rel-${from}` }), 'reserved');
        assert.equal((await wallet.findTempKey(`rel-${from}`))?.usedAt, 4_000, 'used up at the reservation\'s time');
        assert.equal(await authorizations.release(a.nonce, `rel-${from}`), true);
        assert.equal(await authorizations.find(a.nonce), undefined);
        assert.equal((await wallet.findTempKey(`rel-${from}`))?.usedAt, null);
        assert.equal(await authorizations.held({ network: 'ethereum', contractAddress: '0xC', fromAddress: from }), 0n);
        assert.equal(await authorizations.release(a.nonce, `rel-${from}`), false);

        const b = authorization(from, 4n, 4_100);
        assert.equal(await authorizations.reserve(b, { balance: async () => 4n, consumeTempKey: `rel2-${from}` }), 'reserved');
        await store.db.updateTable('authorizations').set({ status: 'submitted' }).where('nonce', '=', b.nonce).execute();
        assert.equal(await authorizations.release(b.nonce, `rel2-${from}`), false, 'a sent authorization is not released');
        assert.equal((await authorizations.find(b.nonce))?.status, 'submitted');
        assert.equal((await wallet.findTempKey(`rel2-${from}`))?.usedAt, 4_100, 'nor its temp key given back');
        // Released without a temp key: the key it did not use stays as it is.
        const c = authorization(from, 0n, 4_200);
        assert.equal(await authorizations.reserve(c, { balance: async () => 4n }), 'reserved');
        assert.equal(await authorizations.release(c.nonce), true);
        assert.equal((await wallet.findTempKey(`rel2-${from}`))?.usedAt, 4_100);
      });

      test('open authorizations whose validity ended before the edge, of the network, oldest first; the newest attempt of a reference prefix', async () => {
        const from = await newAccount();
        const mk = (createdAt: number, validBefore: number, reference: string, network = 'polygon') => authorization(from, 1n, createdAt, { validBefore, reference, network });
        const late = mk(6_300, 600, 'reward:r1:1');
        const early = mk(6_100, 500, 'reward:r1:2');
        const edge = mk(6_200, 700, 'reward:r10:1');
        const ended = mk(6_000, 100, 'reward:r2:1');
        const elsewhere = mk(6_000, 100, 'reward:r1:9', 'bnb');
        for (const a of [late, early, edge, ended, elsewhere]) assert.equal(await authorizations.reserve(a, { balance: async () => 100n }), 'reserved');
        assert.equal(await authorizations.finish(ended.nonce, 'expired', {}, 6_500), true);
        assert.deepEqual((await authorizations.listOpenExpired('polygon', 700)).map((a) => a.reference), ['reward:r1:2', 'reward:r1:1']);
        assert.deepEqual((await authorizations.listOpenExpired('polygon', 701)).map((a) => a.reference), ['reward:r1:2', 'reward:r10:1', 'reward:r1:1']);
        assert.deepEqual(await authorizations.listOpenExpired('polygon', 500), []);

        assert.equal((await authorizations.findLatestByReferencePrefix('polygon', 'reward:r1:'))?.reference, 'reward:r1:1', 'the newest attempt');
        assert.deepEqual(await authorizations.findLatestByReferencePrefix('polygon', 'reward:r1:'), reserved(late));
        assert.equal((await authorizations.findLatestByReferencePrefix('polygon', 'reward:r10:'))?.reference, 'reward:r10:1');
        assert.equal((await authorizations.findLatestByReferencePrefix('bnb', 'reward:r1:'))?.reference, 'reward:r1:9');
        assert.equal(await authorizations.findLatestByReferencePrefix('polygon', 'reward:r3:'), undefined);
        // Two attempts at the same instant: the smaller nonce.
        const tieA = mk(7_000, 900, 'reward:r4:1');
        const tieB = mk(7_000, 900, 'reward:r4:2');
        for (const a of [tieB, tieA]) assert.equal(await authorizations.reserve(a, { balance: async () => 100n }), 'reserved');
        assert.equal((await authorizations.findLatestByReferencePrefix('polygon', 'reward:r4:'))?.nonce, tieA.nonce);
      });

      test('used authorizations count as held from the window before the reservation on, unless already used when the balance was read', async () => {
        const from = await newAccount();
        const account = { network: 'ethereum', contractAddress: '0xC', fromAddress: from };
        const a = authorization(from, 10n, 100_000);
        assert.equal(await authorizations.reserve(a, { balance: async () => 10n }), 'reserved');
        // Used during the next reservation's balance read: still held for it.
        const b = authorization(from, 1n, 160_000);
        assert.equal(await authorizations.reserve(b, {
          balance: async () => { await authorizations.finish(a.nonce, 'used', { txHash: '0xA' }, 100_000); return 10n; },
        }), 'insufficient', 'used at exactly the window\'s start, after the read: 10 may not show it yet');
        assert.equal(await authorizations.held(account), 0n, 'held counts only open ones');
        // Used before the read: the balance shows it.
        assert.equal(await authorizations.reserve(b, { balance: async () => 10n }), 'reserved');
      });
    });
  });
}
