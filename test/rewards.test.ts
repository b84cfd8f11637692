import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { balanceOf, newUser, openSession, startPaymentTest, unary, untilAppWaits, type PaymentTest } from './support/payments.ts';

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: 'R-2001', name: 'Book Shop' });
  await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '1000' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const issue = (reason: string, amount: string) => unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: reason, exchange_amount: amount });

describe('IssueReward', () => {
  test('creates a reward with reward_id and reward_date; the same tid and reason never makes a second one', async () => {
    const reason = `receipt-${randomUUID()}`;
    const first = await issue(reason, '5000');
    assert.equal(first.common.res_code, '00');
    assert.equal(first.common.target_api, 'issueReward');
    assert.match(first.content.reward_id, /^[0-9A-F]{24}$/);
    assert.match(first.content.reward_date, /^\d{14}$/);
    assert.equal(first.content.token_amount, '5');
    assert.equal(first.content.token_symbol, 'VIXP');
    assert.equal(first.content.exchange_rate, '1000');
    assert.equal(first.content.exchange_amount, '5000');
    assert.match(first.content.exchange_date_index, /^\d{13}$/);
    const repeated = await issue(reason, '5000');
    assert.equal(repeated.common.res_code, '00');
    assert.equal(repeated.content.reward_id, first.content.reward_id);
    const other = await issue(reason, '7000');
    assert.equal(other.common.res_code, '05');
    assert.equal(other.common.res_message, 'Already rewarded');
  });

  test('a bad amount is 04', async () => {
    assert.equal((await issue(`r-${randomUUID()}`, '-3')).common.res_code, '04');
    assert.equal((await issue(`r-${randomUUID()}`, 'abc')).common.res_code, '04');
  });
});

describe('reward claims and CancelReward', () => {
  test('from a receipt: END_REWARD, tokens move; claim again 05; cancel moves them back; cancel again 03', async () => {
    const user = await newUser(p);
    const issued = (await issue(`receipt-${randomUUID()}`, '2500')).content;
    const storeBefore = await balanceOf(p, store.settlementAddress);

    const claim = async () => {
      const app = openSession(p.client, 'DoPayment', user.token);
      app.send({ state: 'START_REWARD', reward_id: issued.reward_id, token_amount: issued.token_amount, token_symbol: 'VIXP', user_address: user.address });
      const answer = await app.next();
      assert.equal((await app.closed).code, 0);
      return answer;
    };
    const end = await claim();
    assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
    assert.equal(end.content.state, 'END_REWARD');
    assert.equal(end.content.token_amount, '2.5');
    assert.equal(end.content.user_address, user.address);
    assert.equal(end.content.exchange_amount, '2500');
    assert.equal(end.content.exchange_rate, '1000');
    assert.equal(end.content.contract_address, p.t.platform.contracts.ethereum.vixpToken);
    assert.equal(await balanceOf(p, user.address), '2.5');
    assert.equal(Number(storeBefore) - Number(await balanceOf(p, store.settlementAddress)), 2.5);

    const again = await claim();
    assert.equal(again.common.res_code, '05');
    assert.equal(again.content.state, 'END_REWARD');
    assert.equal(await balanceOf(p, user.address), '2.5');

    const cancel = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: issued.reward_id, token_amount: '2.5' });
    assert.equal(cancel.common.res_code, '00', JSON.stringify(cancel.common));
    assert.match(cancel.content.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
    assert.match(cancel.content.approval_no, /^\d{16}$/);
    assert.match(cancel.content.approval_date, /^\d{14}$/);
    assert.equal(cancel.content.user_address, user.address);
    assert.equal(await balanceOf(p, user.address), '0');
    assert.equal(await balanceOf(p, store.settlementAddress), storeBefore);

    const twice = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: issued.reward_id, token_amount: '2.5' });
    assert.equal(twice.common.res_code, '03');
    assert.equal(twice.common.res_message, 'Reward already canceled');
    const canceledClaim = await claim();
    assert.equal(canceledClaim.common.res_code, '03');
  });

  test('at the POS: app START_PAY + POS START_REWARD, END_REWARD to both', async () => {
    const user = await newUser(p);
    const issued = (await issue(`pos-${randomUUID()}`, '1000')).content;
    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send({ state: 'START_REWARD', tid: store.tid, tran_no: 'RW-1', reward_id: issued.reward_id, token_amount: '1', user_uuid: uuid, user_address: user.address });
    const posEnd = await pos.next();
    const appEnd = await app.next();
    for (const end of [posEnd, appEnd]) {
      assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
      assert.equal(end.content.state, 'END_REWARD');
      assert.equal(end.content.token_amount, '1');
      assert.equal(end.content.user_address, user.address);
    }
    assert.equal(posEnd.common.target_api, 'startPayment');
    assert.equal(appEnd.common.target_api, 'doPayment');
    assert.equal(await balanceOf(p, user.address), '1');
  });

  test('at the POS, an unknown reward is 01 END_REWARD to the POS and to the waiting app', async () => {
    const user = await newUser(p);
    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    // The failure reaches an app that is waiting: let its START_PAY be registered first.
    await untilAppWaits(p, uuid);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send({ state: 'START_REWARD', tid: store.tid, tran_no: 'RW-2', reward_id: 'NOPE', token_amount: '1', user_uuid: uuid, user_address: user.address });
    for (const end of [await pos.next(), await app.next()]) {
      assert.equal(end.common.res_code, '01');
      assert.equal(end.common.res_message, 'Reward not issued');
      assert.equal(end.content.state, 'END_REWARD');
      assert.equal(end.content.tran_no, 'RW-2');
    }
  });

  test('reward codes: 01 not issued, 02 expired, 04 bad amount; unclaimed cancel voids it', async () => {
    const user = await newUser(p);
    const receipt = async (rewardId: string, tokenAmount: string) => {
      const app = openSession(p.client, 'DoPayment', user.token);
      app.send({ state: 'START_REWARD', reward_id: rewardId, token_amount: tokenAmount, token_symbol: 'VIXP' });
      return (await app.next()).common;
    };
    assert.equal((await receipt('NOPE', '1')).res_code, '01');
    assert.equal((await receipt('NOPE', '1')).res_message, 'Reward not issued');

    const issued = (await issue(`x-${randomUUID()}`, '3000')).content;
    assert.equal((await receipt(issued.reward_id, '3.5')).res_code, '04');
    await p.t.platform.store.db.updateTable('rewards').set({ expires_at: Date.now() - 1 }).where('id', '=', issued.reward_id).execute();
    assert.equal((await receipt(issued.reward_id, '3')).res_code, '02');
    assert.equal(await balanceOf(p, user.address), '0');

    const fresh = (await issue(`y-${randomUUID()}`, '3000')).content;
    const voided = await unary(p.client, 'CancelReward', store.apiKey, { reward_id: fresh.reward_id, token_amount: '3' });
    assert.equal(voided.common.res_code, '00');
    assert.equal(voided.content.transfer_transaction_id, '');
    assert.equal((await receipt(fresh.reward_id, '3')).res_code, '03');
    assert.equal((await unary(p.client, 'CancelReward', store.apiKey, { reward_id: 'NOPE' })).common.res_code, '01');
  });
});
