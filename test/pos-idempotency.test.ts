import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import {
  balanceOf, bearer, common, newUser, openSession, startPay, startPaymentTest, transferFor, untilAppWaits, type PaymentTest, type TestUser,
} from './support/payments.ts';

let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ PAYMENT_IDLE_TIMEOUT_SECONDS: '4', PAYMENT_PAIRING_WINDOW_SECONDS: '4' });
  store = await p.t.platform.payments.addStore({ tid: `T-${randomUUID().slice(0, 6)}`, name: 'Corner Cafe' });
  await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '1000' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const tranNo = () => `TR${randomUUID().slice(0, 8)}`;

/** A unary call with `common.tran_no` set (content carries no tran_no, as docs/interfaces.md#grpc-payments's tables show). */
function unaryWithTranNo(method: string, key: string, content: Record<string, unknown>, tran: string): Promise<any> {
  const api = method[0]!.toLowerCase() + method.slice(1);
  return new Promise((resolve, reject) => {
    p.client[method]({ common: common(api, tran), content }, bearer(key), (error: Error | null, response: any) => (error ? reject(error) : resolve(response)));
  });
}

/** A whole approved payment; answers the POS's END_PAY. */
async function pay(user: TestUser, amount: string, tran = tranNo()) {
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  await untilAppWaits(p, uuid);
  pos.send(startPay(p, store.tid, tran, user, uuid, amount));
  app.send(await transferFor(p, user, await app.next()));
  await pos.next();
  const end = await pos.next();
  await Promise.all([app.closed, pos.closed]);
  return end;
}

async function lookup(tid: string, tran: string, key = store.apiKey) {
  const response = await p.t.app.inject({ method: 'GET', url: `/v1/ict/payments/${encodeURIComponent(tid)}/${encodeURIComponent(tran)}`, headers: { authorization: `Bearer ${key}` } });
  return { status: response.statusCode, body: response.json() as any };
}

describe('CancelPayment, IssueReward and CancelReward are idempotent on (tid, common.tran_no)', () => {
  test('CancelPayment repeated with the same tran_no refunds once and answers the first cancellation', async () => {
    const user = await newUser(p, '20');
    const end = await pay(user, '10000');
    const request = { tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, user_address: user.address, token_amount: '4' };
    const tran = tranNo();
    const first = await unaryWithTranNo('CancelPayment', store.apiKey, request, tran);
    assert.equal(first.common.res_code, '00', JSON.stringify(first.common));
    const retry = await unaryWithTranNo('CancelPayment', store.apiKey, request, tran);
    assert.equal(retry.common.res_code, '00');
    for (const field of ['transfer_transaction_id', 'approval_no', 'approval_date', 'token_amount', 'user_address']) {
      assert.equal(retry.content[field], first.content[field], field);
    }
    assert.equal(await balanceOf(p, user.address), '14', 'refunded once');
    // Concurrent retries of one tran_no: at most one refund between them.
    const tran2 = tranNo();
    const racing = await Promise.all(Array.from({ length: 5 }, () => unaryWithTranNo('CancelPayment', store.apiKey, { ...request, token_amount: '1' }, tran2)));
    for (const r of racing) assert.ok(['00', '13'].includes(r.common.res_code), r.common.res_code);
    assert.equal(new Set(racing.filter((r) => r.common.res_code === '00').map((r) => r.content.approval_no)).size, 1);
    assert.equal(await balanceOf(p, user.address), '15');
    // The same tran_no with other parameters is refused (11); a new tran_no is a new cancellation.
    const other = await unaryWithTranNo('CancelPayment', store.apiKey, { ...request, token_amount: '2' }, tran);
    assert.equal(other.common.res_code, '11');
    assert.match(other.common.res_message, /tran_no/);
    assert.equal(await balanceOf(p, user.address), '15');
    const next = await unaryWithTranNo('CancelPayment', store.apiKey, { ...request, token_amount: '2' }, tranNo());
    assert.equal(next.common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '17');

    // The payment's lookup lists the refunds.
    const found = await lookup(store.tid, end.content.tran_no);
    assert.equal(found.body.resultData.refundedAmount, '7');
    assert.deepEqual(found.body.resultData.refunds.map((r: any) => r.tokenAmount).sort(), ['1', '2', '4']);
  });

  test('a refused CancelPayment frees its tran_no: the retry runs again', async () => {
    const user = await newUser(p, '20');
    const end = await pay(user, '5000');
    const request = { tid: store.tid, transfer_transaction_id: end.content.transfer_transaction_id, token_amount: '9' };
    const tran = tranNo();
    assert.equal((await unaryWithTranNo('CancelPayment', store.apiKey, request, tran)).common.res_code, '16');
    const fixed = await unaryWithTranNo('CancelPayment', store.apiKey, { ...request, token_amount: '5' }, tran);
    assert.equal(fixed.common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '20');
  });

  test('IssueReward: the same tran_no answers the first reward; with another reason it is 11', async () => {
    const tran = tranNo();
    const request = { tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '3000' };
    const first = await unaryWithTranNo('IssueReward', store.apiKey, request, tran);
    assert.equal(first.common.res_code, '00');
    const retry = await unaryWithTranNo('IssueReward', store.apiKey, request, tran);
    assert.equal(retry.common.res_code, '00');
    assert.deepEqual(retry.content, first.content);
    const other = await unaryWithTranNo('IssueReward', store.apiKey, { ...request, reward_reason: `r-${randomUUID()}` }, tran);
    assert.equal(other.common.res_code, '11', 'no second reward under one tran_no');
  });

  test('CancelReward repeated with the same tran_no answers the first cancellation (not 03) and moves tokens back once', async () => {
    const user = await newUser(p);
    const issued = (await unaryWithTranNo('IssueReward', store.apiKey, { tid: store.tid, reward_reason: `r-${randomUUID()}`, exchange_amount: '2000' }, '')).content;
    const app = openSession(p.client, 'DoPayment', user.token);
    app.send({ state: 'START_REWARD', reward_id: issued.reward_id, token_amount: issued.token_amount, token_symbol: 'VIXP', user_address: user.address });
    assert.equal((await app.next()).common.res_code, '00');
    assert.equal(await balanceOf(p, user.address), '2');
    const tran = tranNo();
    const first = await unaryWithTranNo('CancelReward', store.apiKey, { reward_id: issued.reward_id, token_amount: '2' }, tran);
    assert.equal(first.common.res_code, '00', JSON.stringify(first.common));
    const retry = await unaryWithTranNo('CancelReward', store.apiKey, { reward_id: issued.reward_id, token_amount: '2' }, tran);
    assert.equal(retry.common.res_code, '00');
    assert.equal(retry.content.transfer_transaction_id, first.content.transfer_transaction_id);
    assert.equal(retry.content.approval_no, first.content.approval_no);
    assert.equal(await balanceOf(p, user.address), '0');
    // Without the tran_no (or with another) a second cancellation is still 03.
    assert.equal((await unaryWithTranNo('CancelReward', store.apiKey, { reward_id: issued.reward_id, token_amount: '2' }, tranNo())).common.res_code, '03');
  });
});

describe('GET /v1/ict/payments/{tid}/{tran_no} (POS API key)', () => {
  test('approved with END_PAY\'s fields; failed with its res_code; unknown 404; another store or key refused', async () => {
    const user = await newUser(p, '10');
    const end = await pay(user, '4000');
    const found = await lookup(store.tid, end.content.tran_no);
    assert.equal(found.status, 200, JSON.stringify(found.body));
    const data = found.body.resultData;
    assert.equal(data.status, 'approved');
    assert.equal(data.resCode, '00');
    for (const [field, wire] of [['approvalNo', 'approval_no'], ['approvalDate', 'approval_date'], ['transferTransactionId', 'transfer_transaction_id'], ['tokenAmount', 'token_amount'], ['userAddress', 'user_address'], ['exchangeRate', 'exchange_rate'], ['exchangeDateIndex', 'exchange_date_index'], ['exchangeAmount', 'exchange_amount'], ['contractAddress', 'contract_address'], ['tokenSymbol', 'token_symbol'], ['tranNo', 'tran_no']] as const) {
      assert.equal(data[field], end.content[wire], field);
    }
    assert.equal(data.tid, store.tid);
    assert.deepEqual(data.refunds, []);

    // A payment whose QR code had expired: failed with 03.
    const tran = tranNo();
    const pos = openSession(p.client, 'StartPayment', store.apiKey);
    pos.send(startPay(p, store.tid, tran, user, randomUUID(), '1000', -10));
    assert.equal((await pos.next()).common.res_code, '03');
    const failed = (await lookup(store.tid, tran)).body.resultData;
    assert.equal(failed.status, 'failed');
    assert.equal(failed.resCode, '03');
    assert.equal(failed.resMessage, 'Transaction time expired');
    assert.equal(failed.approvalNo, '');

    assert.equal((await lookup(store.tid, 'no-such-tran')).status, 404);
    const other = await p.t.platform.payments.addStore({ tid: `T-${randomUUID().slice(0, 6)}`, name: 'Other' });
    assert.equal((await lookup(store.tid, end.content.tran_no, other.apiKey)).status, 401, 'another store\'s key');
    assert.equal((await lookup(other.tid, end.content.tran_no, other.apiKey)).status, 404, 'not that store\'s payment');
    assert.equal((await lookup(store.tid, end.content.tran_no, 'vxp_wrong')).status, 401);
  });
});
