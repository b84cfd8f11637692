import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { formatDateTime } from '../src/commerce/platform-dates.ts';
import {
  balanceOf, bearer, newUser, openSession, startPaymentTest, unary, untilAppWaits, untilPosWaits, type PaymentTest,
} from './support/payments.ts';
import { untilAtDesk } from './support/pairing.ts';

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

describe('a contract-literal app claims at the POS: DoPayment START_PAY carries only state', () => {
  for (const order of ['app first', 'POS first'] as const) {
    test(`${order}: the POS sends the user's id as user_uuid: END_REWARD 00 to both`, async () => {
      const user = await newUser(p);
      const issued = (await issue(`spec-${randomUUID()}`, '2000')).content;
      const app = openSession(p.client, 'DoPayment', user.token);
      const pos = openSession(p.client, 'StartPayment', store.apiKey);
      const claim = { state: 'START_REWARD', tid: store.tid, tran_no: 'RW-S', reward_id: issued.reward_id, token_amount: '2', user_uuid: user.userId, user_address: user.address };
      if (order === 'app first') {
        app.send({ state: 'START_PAY' });
        await untilAppWaits(p, user.userId);
        pos.send(claim);
      } else {
        pos.send(claim);
        await untilPosWaits(p, user.userId);
        app.send({ state: 'START_PAY' });
      }
      for (const end of [await pos.next(), await app.next()]) {
        assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
        assert.equal(end.content.state, 'END_REWARD');
        assert.equal(end.content.token_amount, '2');
      }
      assert.equal(await balanceOf(p, user.address), '2');
    });
  }
});

describe('reward calls answer only the reward table\'s 01–05; other conditions our codes', () => {
  test('IssueReward the store\'s balance cannot fund is 19, not 02 (Reward expired)', async () => {
    const poor = await unary(p.client, 'IssueReward', store.apiKey, { tid: store.tid, reward_reason: `big-${randomUUID()}`, exchange_amount: '100000000' });
    assert.equal(poor.common.res_code, '19');
    assert.match(poor.common.res_message, /^Insufficient balance: /);
    assert.equal(poor.common.target_api, 'issueReward');
  });

  test('a POS claim whose app left is 21 (not 01) to the POS; one whose app never came is 22 (not 03)', async () => {
    const user = await newUser(p);
    const issued = (await issue(`gone-${randomUUID()}`, '1000')).content;
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY' });
    await untilAppWaits(p, user.userId);
    app.call.cancel();
    await untilAtDesk({ desk: p.t.platform.desk, ...(p.redisKeyPrefix && { redisKeyPrefix: p.redisKeyPrefix }) }, 'app', user.userId, { gone: true });
    const claim = { state: 'START_REWARD', tid: store.tid, tran_no: 'RW-G', reward_id: issued.reward_id, token_amount: '1', user_uuid: user.userId, user_address: user.address };
    const left = openSession(p.client, 'StartPayment', store.apiKey);
    left.send(claim);
    const told = await left.next();
    assert.equal(told.common.res_code, '21', JSON.stringify(told.common));
    assert.match(told.common.res_message, /^Canceled by the user: /);
    assert.equal(told.content.state, 'END_REWARD');

    const nobody = openSession(p.client, 'StartPayment', store.apiKey);
    nobody.send({ ...claim, user_uuid: `absent-${randomUUID()}` });
    const expired = await nobody.next(10_000);
    assert.equal(expired.common.res_code, '22', JSON.stringify(expired.common));
    assert.match(expired.common.res_message, /^Transaction time expired: /);
    assert.equal(expired.content.state, 'END_REWARD');
    assert.equal(await balanceOf(p, user.address), '0');
  });
});

describe('every server message names its call and carries rsp_timestamp', () => {
  const platformNow = () => formatDateTime(Date.now(), p.t.platform.config.timeZone);

  test('a unary request without common: the response has target_api of the call and rsp_timestamp (platform time zone)', async () => {
    const before = platformNow();
    for (const [method, api] of [['IssueReward', 'issueReward'], ['CancelReward', 'cancelReward'], ['CancelPayment', 'cancelPayment']] as const) {
      const answer = await new Promise<any>((resolve, reject) => {
        (p.client as any)[method]({ content: { tid: store.tid, reward_id: 'NOPE', reward_reason: '' } }, bearer(store.apiKey), (error: grpc.ServiceError | null, response: any) => (error ? reject(error) : resolve(response)));
      });
      assert.equal(answer.common.target_api, api);
      assert.notEqual(answer.common.res_code, '00');
      assert.ok(answer.common.rsp_timestamp >= before && answer.common.rsp_timestamp <= platformNow(), answer.common.rsp_timestamp);
    }
  });

  test('a stream message without common: target_api of the stream\'s call', async () => {
    const user = await newUser(p);
    const call = p.client.DoPayment(bearer(user.token));
    const answer = await new Promise<any>((resolve) => {
      call.on('data', resolve);
      call.on('error', () => undefined);
      call.write({ content: { state: 'START_REWARD', reward_id: 'NOPE', token_amount: '1' } });
    });
    assert.equal(answer.common.target_api, 'doPayment');
    assert.equal(answer.common.res_code, '01');
    assert.equal(answer.common.res_message, 'Reward not issued');
    assert.match(answer.common.rsp_timestamp, /^\d{14}$/);
    const pos = p.client.StartPayment(bearer(store.apiKey));
    const posAnswer = await new Promise<any>((resolve) => {
      pos.on('data', resolve);
      pos.on('error', () => undefined);
      pos.write({ content: { state: 'START_PAY', tid: store.tid } });
    });
    assert.equal(posAnswer.common.target_api, 'startPayment');
    assert.equal(posAnswer.common.res_code, '11');
  });
});
