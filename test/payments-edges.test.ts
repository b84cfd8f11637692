import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { balanceOf, newUser, openSession, startPay, startPaymentTest, unary, untilAppWaits, type PaymentTest } from './support/payments.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '2', PAYMENT_PAIRING_WINDOW_SECONDS: '2' });
  store = await p.t.platform.payments.addStore({ tid: 'E-3001', name: 'Edge Store' });
  // KRW (the default currency) has a notice; no test here publishes JPY.
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const tranNo = () => `E${randomUUID().slice(0, 8)}`;

describe('payment edges', () => {
  test('17 for a currency without any rate notice', async () => {
    const user = await newUser(p, '10');
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    const app = openSession(p.client, 'DoPayment', user.token);
    const uuid = randomUUID();
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await untilAppWaits(p, uuid);
    pos.send({ ...startPay(p, store.tid, tranNo(), user, uuid, '1000'), exchange_currency: 'JPY' });
    const answer = await pos.next();
    assert.equal(answer.common.res_code, '17');
    assert.match(answer.common.res_message, /^No exchange rate notice: .*JPY/);
    const told = await app.next();
    assert.equal(told.common.res_code, '17');
    assert.equal(told.content.state, 'END_PAY');
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('12 when the tid is not the API key\'s store; 11 when the QR\'s user_address is not the app user\'s', async () => {
    const user = await newUser(p, '10');
    const stranger = await newUser(p);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, 'OTHER-TID', tranNo(), user, randomUUID(), '1000'));
    assert.equal((await pos.next()).common.res_code, '12');

    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await untilAppWaits(p, uuid);
    const pos2 = openSession(p.client, 'StartPayment', store.apiKey);
    pos2.send(startPay(p, store.tid, tranNo(), stranger, uuid, '1000'));
    assert.equal((await pos2.next()).common.res_code, '11');
    assert.equal((await app.next()).common.res_code, '11');
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('01 to the app when the POS cancels its call before TRANSFER', async () => {
    const user = await newUser(p, '10');
    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    await untilAppWaits(p, uuid);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, tranNo(), user, uuid, '1000'));
    assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
    await pos.next();
    pos.call.cancel();
    const told = await app.next();
    assert.equal(told.common.res_code, '01');
    assert.equal(told.content.state, 'END_PAY');
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('03 to an app that no POS picks up within the idle timeout', async () => {
    const user = await newUser(p);
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: randomUUID() });
    const told = await app.next();
    assert.equal(told.common.res_code, '03');
    assert.equal((await app.closed).code, 0);
  });

  test('11 for a second app with a user_uuid already waiting; 19 for a reward the store cannot fund', async () => {
    const user = await newUser(p);
    const uuid = randomUUID();
    const first = openSession(p.client, 'DoPayment', user.token);
    first.send({ state: 'START_PAY', user_uuid: uuid });
    await untilAppWaits(p, uuid);
    const second = openSession(p.client, 'DoPayment', user.token);
    second.send({ state: 'START_PAY', user_uuid: uuid });
    assert.equal((await second.next()).common.res_code, '11');
    first.call.cancel();

    const poor = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: 'too much', exchange_amount: '1000000' });
    assert.equal(poor.common.res_code, '19');
  });

  test('a payment left pending by a stopped instance is settled from the chain on a retry', async () => {
    const old = Date.now() - 3_600_000;
    const vixp = p.t.platform.contracts.ethereum.vixpToken;
    const stale = (id: string, tran: string, userAddress: string) => ({
      id, tid: store.tid, tran_no: tran, status: 'pending' as const, user_uuid: 'u', user_address: userAddress,
      settlement_address: store.settlementAddress, network: 'ethereum', contract_address: vixp,
      token_symbol: 'VIXP', token_amount: '1000000000000000000', exchange_amount: '1000', exchange_currency: 'KRW', exchange_rate: '1000',
      exchange_date_index: '2026112200001', transfer_transaction_id: null, approval_no: null, approval_date: null, refunded_amount: '0',
      failure_code: null, created_at: old, updated_at: old,
    });
    const db = p.t.platform.store.db;
    // No transfer was ever made for it: the tran_no is free again (here the app never comes: 03, not 13).
    const idle = await newUser(p, '1');
    const freeTran = tranNo();
    await db.insertInto('payments').values(stale(randomUUID(), freeTran, idle.address)).execute();
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, freeTran, idle, randomUUID(), '1000'));
    assert.equal((await pos.next()).common.res_code, '03');
    assert.equal(await balanceOf(p, idle.address), '1');

    // The stopped instance had made the payment's transfer: a real one on the chain, made the way
    // runPayment makes it (the app's signed transfer, under the payment's reference), before the
    // instance could record the approval.
    const user = await newUser(p, '5');
    const paidId = randomUUID();
    const paidTran = tranNo();
    await db.insertInto('payments').values(stale(paidId, paidTran, user.address)).execute();
    const storeBefore = await balanceOf(p, store.settlementAddress);
    const signed = await prepareTransfer(p.t.app, user, store.settlementAddress, '1');
    const { data: _data, ...transfer } = signed;
    const made = await p.t.platform.wallet.transfer('ethereum', { ...transfer, contractAddress: vixp, reference: `payment:${paidId}` });
    assert.equal(made.status, 'settled');
    if (made.status !== 'settled') return;
    const receipt = await p.t.platform.chains.ethereum.client.getTransactionReceipt({ hash: made.transactionId });
    assert.equal(receipt.status, 'success');
    assert.equal(await balanceOf(p, user.address), '4');

    const retry = openSession(p.client, 'StartPayment', store.apiKey);
    retry.send(startPay(p, store.tid, paidTran, user, randomUUID(), '1000'));
    const approved = await retry.next();
    assert.equal(approved.common.res_code, '00', JSON.stringify(approved.common));
    assert.equal(approved.content.state, 'END_PAY');
    assert.equal(approved.content.transfer_transaction_id, made.transactionId);
    assert.match(approved.content.approval_no, /^\d{16}$/);
    assert.equal(approved.content.token_amount, '1');
    assert.equal(approved.content.user_address, user.address);
    // Settling moved nothing more: the one transfer on the chain is the payment.
    assert.equal(await balanceOf(p, user.address), '4');
    assert.equal(Number(await balanceOf(p, store.settlementAddress)) - Number(storeBefore), 1);
    const again = openSession(p.client, 'StartPayment', store.apiKey);
    again.send(startPay(p, store.tid, paidTran, user, randomUUID(), '1000'));
    const repeated = await again.next();
    assert.equal(repeated.content.approval_no, approved.content.approval_no);
    assert.equal(repeated.content.transfer_transaction_id, made.transactionId);
  });
});
