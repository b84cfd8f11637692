import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { parseUnits } from 'viem';
import {
  balanceOf, newUser, openSession, startPay, startPaymentTest, transferFor, unary, untilAppWaits, untilPosWaits, type PaymentTest, type TestUser,
} from './support/payments.ts';

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: 'T-1001', name: 'Corner Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
});
after(async () => { await p?.stop(); });

const tranNo = () => `TR${randomUUID().slice(0, 8)}`;

/** A whole payment, app first; answers every message each side saw. */
async function pay(user: TestUser, amount: string, options: { tranNo?: string; posFirst?: boolean } = {}) {
  const uuid = randomUUID();
  const tran = options.tranNo ?? tranNo();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  if (options.posFirst) {
    pos.send(startPay(p, store.tid, tran, user, uuid, amount));
    await untilPosWaits(p, uuid);
    app.send({ state: 'START_PAY', user_uuid: uuid });
  } else {
    app.send({ state: 'START_PAY', user_uuid: uuid });
    pos.send(startPay(p, store.tid, tran, user, uuid, amount));
  }
  const appRequest = await app.next();
  const posRequest = await pos.next();
  app.send(await transferFor(p, user, appRequest));
  const appEnd = await app.next();
  const posEnd = await pos.next();
  return { tran, app, pos, appRequest, posRequest, appEnd, posEnd, appStatus: await app.closed, posStatus: await pos.closed };
}

describe('payment approval', () => {
  test('app first: REQUEST_TRANSFER to both, TRANSFER, END_PAY with approval to the POS only; tokens move exactly', async () => {
    const user = await newUser(p, '100');
    const before = await balanceOf(p, store.settlementAddress);
    const r = await pay(user, '15000');

    assert.equal(r.appRequest.content.state, 'REQUEST_TRANSFER');
    assert.equal(r.appRequest.common.res_code, '00');
    assert.equal(r.appRequest.common.res_message, 'Success');
    assert.equal(r.appRequest.content.token_amount, '10');
    assert.equal(r.appRequest.content.settlement_address, store.settlementAddress);
    assert.equal(r.appRequest.content.store_name, 'Corner Cafe');
    assert.equal(r.appRequest.content.exchange_rate, '1500');
    assert.equal(r.appRequest.content.exchange_amount, '15000');
    assert.match(r.appRequest.content.exchange_date_index, /^\d{8}\d{5}$/);
    assert.equal(r.appRequest.content.tran_no, r.tran);
    assert.equal(r.posRequest.content.state, 'REQUEST_TRANSFER');
    assert.equal(r.posRequest.content.tran_no, r.tran);
    assert.equal(r.posRequest.content.token_amount, '', 'the POS REQUEST_TRANSFER carries state and tran_no only');

    const end = r.posEnd.content;
    assert.equal(end.state, 'END_PAY');
    assert.equal(r.posEnd.common.res_code, '00');
    assert.match(end.approval_no, /^\d{16}$/);
    assert.match(end.approval_date, /^20\d{12}$/);
    assert.match(end.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
    assert.equal(end.token_amount, '10');
    assert.equal(end.token_symbol, 'VIXP');
    assert.equal(end.user_address, user.address);
    assert.equal(end.contract_address, p.t.platform.contracts.ethereum.vixpToken);
    assert.equal(end.exchange_amount, '15000');
    assert.equal(r.appEnd.content.state, 'END_PAY');
    assert.equal(r.appEnd.content.approval_no, '');
    assert.equal(r.appEnd.content.approval_date, '');
    assert.equal(r.appEnd.content.transfer_transaction_id, end.transfer_transaction_id);
    assert.equal(r.posStatus.code, 0);
    assert.equal(r.appStatus.code, 0);

    // Responses echo the request's routing fields and carry rsp_timestamp.
    assert.equal(r.posEnd.common.target_api, 'startPayment');
    assert.equal(r.posEnd.common.target_package, 'g00.payments.v2');
    assert.equal(r.posEnd.common.source_svc, 'test');
    assert.equal(r.posEnd.common.tran_no, r.tran);
    assert.match(r.posEnd.common.rsp_timestamp, /^\d{14}$/);
    assert.equal(r.appEnd.common.target_api, 'doPayment');

    assert.equal(await balanceOf(p, user.address), '90');
    assert.equal(Number(await balanceOf(p, store.settlementAddress)) - Number(before), 10);
    const receipt = await p.t.platform.chains.ethereum.client.getTransactionReceipt({ hash: end.transfer_transaction_id });
    assert.equal(receipt.status, 'success');
  });

  test('POS first: the app a moment later pairs within the window', async () => {
    const user = await newUser(p, '10');
    const r = await pay(user, '1000', { posFirst: true });
    assert.equal(r.posEnd.content.state, 'END_PAY');
    assert.equal(r.posEnd.common.res_code, '00');
    // 1000 / 1500, rounded down to 18 decimals.
    assert.equal(r.posEnd.content.token_amount, '0.666666666666666666');
    assert.equal(parseUnits(await balanceOf(p, user.address), 18), parseUnits('10', 18) - 666666666666666666n);
  });

  test('a POS retry of an approved tran_no gets the original approval and pays nothing again', async () => {
    const user = await newUser(p, '50');
    const first = await pay(user, '3000');
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, first.tran, user, randomUUID(), '3000'));
    const again = await pos.next();
    assert.equal(again.common.res_code, '00');
    assert.equal(again.content.state, 'END_PAY');
    for (const field of ['approval_no', 'approval_date', 'transfer_transaction_id', 'token_amount', 'exchange_rate', 'exchange_date_index', 'user_address']) {
      assert.equal(again.content[field], first.posEnd.content[field], field);
    }
    assert.equal((await pos.closed).code, 0);
    assert.equal(await balanceOf(p, user.address), '48');
  });

  test('an app still waiting on a tran_no that a POS retry finds approved is given its END_PAY', async () => {
    const user = await newUser(p, '50');
    const first = await pay(user, '3000');
    // The app lost its session before hearing the outcome and waits again (contract-literal: by its user id).
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY' });
    await untilAppWaits(p, user.userId);
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, first.tran, user, user.userId, '3000'));
    const [posAgain, appTold] = await Promise.all([pos.next(), app.next()]);
    assert.equal(posAgain.common.res_code, '00');
    assert.equal(appTold.common.res_code, '00', JSON.stringify(appTold.common));
    assert.equal(appTold.content.state, 'END_PAY');
    assert.equal(appTold.content.transfer_transaction_id, first.posEnd.content.transfer_transaction_id);
    assert.equal(appTold.content.tran_no, first.tran);
    assert.equal((await app.closed).code, 0, 'the app is let go');
    assert.equal(await balanceOf(p, user.address), '48', 'nothing was paid again');
  });
});

/** Opens both sides and returns them after the app got REQUEST_TRANSFER (or the failure). */
async function opened(user: TestUser, amount: string, expiresIn = 300) {
  const uuid = randomUUID();
  const tran = tranNo();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  // The app shows its QR code before the POS scans it: let its START_PAY be registered first.
  await untilAppWaits(p, uuid);
  pos.send(startPay(p, store.tid, tran, user, uuid, amount, expiresIn));
  return { app, pos, tran, uuid };
}

async function assertFailedBoth(app: ReturnType<typeof openSession> | undefined, pos: ReturnType<typeof openSession>, code: string, message: string) {
  const posMessage = await pos.next();
  assert.equal(posMessage.common.res_code, code, JSON.stringify(posMessage.common));
  assert.equal(posMessage.common.res_message, message);
  assert.equal(posMessage.content.state, 'END_PAY');
  assert.equal((await pos.closed).code, 0);
  if (app) {
    const appMessage = await app.next();
    assert.equal(appMessage.common.res_code, code);
    assert.equal(appMessage.content.tran_no, posMessage.content.tran_no);
    assert.equal(appMessage.common.res_message, message);
    assert.equal((await app.closed).code, 0);
  }
}

describe('a contract-literal app: DoPayment START_PAY carries only state', () => {
  for (const order of ['app first', 'POS first'] as const) {
    test(`${order}: the POS sends the user's id (the QR code's user_uuid): END_PAY 00 on both streams`, async () => {
      const user = await newUser(p, '20');
      const tran = tranNo();
      const app = openSession(p.client, 'DoPayment', user.token);
      const pos = openSession(p.client, 'StartPayment', store.apiKey);
      if (order === 'app first') {
        app.send({ state: 'START_PAY' });
        await untilAppWaits(p, user.userId);
        pos.send(startPay(p, store.tid, tran, user, user.userId, '15000'));
      } else {
        pos.send(startPay(p, store.tid, tran, user, user.userId, '15000'));
        await untilPosWaits(p, user.userId);
        app.send({ state: 'START_PAY' });
      }
      const appRequest = await app.next();
      assert.equal(appRequest.common.res_code, '00', JSON.stringify(appRequest.common));
      assert.equal(appRequest.content.state, 'REQUEST_TRANSFER');
      assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
      app.send(await transferFor(p, user, appRequest));
      const appEnd = await app.next();
      const posEnd = await pos.next();
      for (const end of [appEnd, posEnd]) {
        assert.equal(end.common.res_code, '00', JSON.stringify(end.common));
        assert.equal(end.content.state, 'END_PAY');
        assert.equal(end.content.tran_no, tran);
      }
      assert.match(posEnd.content.approval_no, /^\d{16}$/);
      assert.equal((await app.closed).code, 0);
      assert.equal((await pos.closed).code, 0);
      assert.equal(await balanceOf(p, user.address), '10');
    });
  }

  test('an app\'s own user_uuid may not be another user\'s id (11); its own id is fine', async () => {
    const alice = await newUser(p);
    const mallory = await newUser(p);
    const squat = openSession(p.client, 'DoPayment', mallory.token);
    squat.send({ state: 'START_PAY', user_uuid: alice.userId });
    const refused = await squat.next();
    assert.equal(refused.common.res_code, '11');
    assert.match(refused.common.res_message, /^Invalid request: /);
    assert.equal((await squat.closed).code, 0);
    const own = openSession(p.client, 'DoPayment', alice.token);
    own.send({ state: 'START_PAY', user_uuid: alice.userId });
    await untilAppWaits(p, alice.userId);
    own.call.cancel();
  });
});

describe('payment failures reach both streams and move nothing', () => {
  test('01: the app hangs up before TRANSFER', async () => {
    const user = await newUser(p, '10');
    const before = await balanceOf(p, store.settlementAddress);
    const { app, pos } = await opened(user, '1500');
    assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
    assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
    app.call.end();
    await assertFailedBoth(undefined, pos, '01', 'Canceled by the user');
    await app.closed;
    assert.equal(await balanceOf(p, user.address), '10');
    assert.equal(await balanceOf(p, store.settlementAddress), before);
  });

  test('01 to the POS when the app cancels its call before TRANSFER', async () => {
    const user = await newUser(p, '10');
    const { app, pos } = await opened(user, '1500');
    assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
    assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
    app.call.cancel();
    await assertFailedBoth(undefined, pos, '01', 'Canceled by the user');
    // The app ended its own call: it hears its cancellation, nothing from the server.
    assert.equal((await app.closed).code, grpc.status.CANCELLED);
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('01 to the app too when the POS cancels its call before TRANSFER', async () => {
    const user = await newUser(p, '10');
    const before = await balanceOf(p, store.settlementAddress);
    const { app, pos, tran } = await opened(user, '1500');
    assert.equal((await app.next()).content.state, 'REQUEST_TRANSFER');
    assert.equal((await pos.next()).content.state, 'REQUEST_TRANSFER');
    pos.call.cancel();
    const told = await app.next();
    assert.equal(told.common.res_code, '01', JSON.stringify(told.common));
    assert.equal(told.common.res_message, 'Canceled by the user');
    assert.equal(told.content.state, 'END_PAY');
    assert.equal(told.content.tran_no, tran);
    assert.equal(told.content.transfer_transaction_id, '');
    assert.equal((await app.closed).code, grpc.status.OK);
    assert.equal((await pos.closed).code, grpc.status.CANCELLED);
    assert.equal(await balanceOf(p, user.address), '10');
    assert.equal(await balanceOf(p, store.settlementAddress), before);
  });

  test('02: balance below token_amount, before any REQUEST_TRANSFER', async () => {
    const user = await newUser(p, '1');
    const { app, pos } = await opened(user, '3000');
    await assertFailedBoth(app, pos, '02', 'Insufficient balance');
    assert.equal(await balanceOf(p, user.address), '1');
  });

  test('03: expiration_time of the QR code has passed', async () => {
    const user = await newUser(p, '10');
    const { app, pos } = await opened(user, '1500', -5);
    await assertFailedBoth(app, pos, '03', 'Transaction time expired');
  });

  test('03: no TRANSFER within the idle timeout', async () => {
    const user = await newUser(p, '10');
    const { app, pos } = await opened(user, '1500');
    await app.next();
    await pos.next();
    await assertFailedBoth(app, pos, '03', 'Transaction time expired');
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('03: the app never comes within the pairing window', async () => {
    const user = await newUser(p, '10');
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, tranNo(), user, randomUUID(), '1500'));
    await assertFailedBoth(undefined, pos, '03', 'Transaction time expired');
  });

  test('04: a wrong signature, then the same tran_no may be tried again and succeeds', async () => {
    const user = await newUser(p, '10');
    const { app, pos, tran } = await opened(user, '1500');
    const request = await app.next();
    await pos.next();
    const transfer = await transferFor(p, user, request);
    app.send({ ...transfer, transfer_signature: `0x${'11'.repeat(65)}` });
    await assertFailedBoth(app, pos, '04', 'Token API error');
    assert.equal(await balanceOf(p, user.address), '10');

    const retry = await pay(user, '1500', { tranNo: tran });
    assert.equal(retry.posEnd.common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '9');
  });

  test('04: a signature over another amount is refused', async () => {
    const user = await newUser(p, '10');
    const { app, pos } = await opened(user, '1500');
    const request = await app.next();
    await pos.next();
    const transfer = await transferFor(p, user, { content: { ...request.content, token_amount: '0.5' } });
    app.send(transfer);
    await assertFailedBoth(app, pos, '04', 'Token API error');
    assert.equal(await balanceOf(p, user.address), '10');
  });

  test('a POS with a wrong API key, and an app without a valid JWT, are refused', async () => {
    const pos = openSession(p.client, 'StartPayment', 'vxp_wrong');
    pos.send(startPay(p, store.tid, tranNo(), { address: store.settlementAddress }, randomUUID(), '1500'));
    const refused = await pos.next();
    assert.equal(refused.common.res_code, '12');
    const app = openSession(p.client, 'DoPayment', 'not-a-jwt');
    app.send({ state: 'START_PAY', user_uuid: randomUUID() });
    assert.equal((await app.next()).common.res_code, '12');
  });
});

describe('load and idempotency', () => {
  test('twenty payments at once from twenty users at one store, each tran_no also retried at once: each pays once', async () => {
    const users = await Promise.all(Array.from({ length: 20 }, () => newUser(p, '5')));
    const storeBefore = parseUnits(await balanceOf(p, store.settlementAddress), 18);
    const results = await Promise.all(users.map((user) => pay(user, '1500')));
    assert.ok(results.every((r) => r.posEnd.common.res_code === '00'), JSON.stringify(results.map((r) => r.posEnd.common)));
    const retries = await Promise.all(results.map(async (r, i) => {
      const pos = openSession(p.client, 'StartPayment', store.apiKey);
      pos.send(startPay(p, store.tid, r.tran, users[i]!, randomUUID(), '1500'));
      return pos.next();
    }));
    for (const [i, again] of retries.entries()) assert.equal(again.content.approval_no, results[i]!.posEnd.content.approval_no);
    assert.equal(new Set(results.map((r) => r.posEnd.content.approval_no)).size, 20);
    for (const user of users) assert.equal(await balanceOf(p, user.address), '4');
    assert.equal(parseUnits(await balanceOf(p, store.settlementAddress), 18) - storeBefore, parseUnits('20', 18));
  });

  test('the same tran_no started twice at once: one payment, the other is told it is in progress', async () => {
    const user = await newUser(p, '5');
    const tran = tranNo();
    const uuid = randomUUID();
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    const first = openSession(p.client, 'StartPayment', store.apiKey);
    first.send(startPay(p, store.tid, tran, user, uuid, '1500'));
    const request = await app.next();
    await first.next();
    const second = openSession(p.client, 'StartPayment', store.apiKey);
    second.send(startPay(p, store.tid, tran, user, randomUUID(), '1500'));
    assert.equal((await second.next()).common.res_code, '13');
    app.send(await transferFor(p, user, request));
    assert.equal((await first.next()).common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '4');
  });

  test('a POS retry of a tran_no still waiting for its app is told 13, never runs a second payment, and the first is paid once', async () => {
    const user = await newUser(p, '5');
    const tran = tranNo();
    const uuid = randomUUID();
    const first = openSession(p.client, 'StartPayment', store.apiKey);
    first.send(startPay(p, store.tid, tran, user, uuid, '1500'));
    await untilPosWaits(p, uuid);
    // The POS, hearing nothing, sends the same tran_no again before the app has shown up.
    const retry = openSession(p.client, 'StartPayment', store.apiKey);
    retry.send(startPay(p, store.tid, tran, user, randomUUID(), '1500'));
    const answer = await retry.next();
    assert.equal(answer.common.res_code, '13', JSON.stringify(answer.common));
    await retry.closed;
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_PAY', user_uuid: uuid });
    const request = await app.next();
    assert.equal((await first.next()).content.state, 'REQUEST_TRANSFER');
    app.send(await transferFor(p, user, request));
    assert.equal((await first.next()).common.res_code, '00');
    assert.equal((await app.next()).common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '4', 'paid once');
    assert.equal((await p.t.platform.payments.findPayment(store.tid, tran))?.status, 'approved');
  });
});

describe('CancelPayment', () => {
  test('refunds exactly once; partial cancellations never exceed what was paid; another store cannot cancel', async () => {
    const user = await newUser(p, '20');
    const r = await pay(user, '15000');
    const txId = r.posEnd.content.transfer_transaction_id;
    const base = { tid: store.tid, transfer_transaction_id: txId, user_address: user.address, contract_address: r.posEnd.content.contract_address, token_symbol: 'VIXP' };

    const other = await p.t.platform.payments.addStore({ tid: `T-${randomUUID().slice(0, 6)}`, name: 'Other' });
    const foreign = await unary(p.client, 'CancelPayment', other.apiKey, { ...base, tid: other.tid, token_amount: '10' });
    assert.equal(foreign.common.res_code, '14');

    const tooMuch = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, token_amount: '10.5' });
    assert.equal(tooMuch.common.res_code, '16');

    const partial = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, token_amount: '4', exchange_amount: '6000' });
    assert.equal(partial.common.res_code, '00', JSON.stringify(partial.common));
    assert.equal(partial.content.token_amount, '4');
    assert.match(partial.content.approval_no, /^\d{16}$/);
    assert.notEqual(partial.content.approval_no, r.posEnd.content.approval_no);
    assert.match(partial.content.approval_date, /^\d{14}$/);
    assert.match(partial.content.transfer_transaction_id, /^0x[0-9a-f]{64}$/);
    assert.notEqual(partial.content.transfer_transaction_id, txId);
    assert.equal(await balanceOf(p, user.address), '14');

    const [rest, racing] = await Promise.all([
      unary(p.client, 'CancelPayment', store.apiKey, { ...base, token_amount: '' }),
      unary(p.client, 'CancelPayment', store.apiKey, { ...base, token_amount: '6' }),
    ]);
    const codes = [rest.common.res_code, racing.common.res_code].sort();
    assert.equal(codes[0], '00');
    assert.ok(['15', '16'].includes(codes[1]!), codes.join());
    assert.equal(await balanceOf(p, user.address), '20');

    const again = await unary(p.client, 'CancelPayment', store.apiKey, base);
    assert.equal(again.common.res_code, '15');
    assert.equal(again.common.res_message.startsWith('Payment already canceled'), true);
    const unknown = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, transfer_transaction_id: `0x${'ab'.repeat(32)}` });
    assert.equal(unknown.common.res_code, '14');
    assert.equal(await balanceOf(p, user.address), '20');
  });
});
