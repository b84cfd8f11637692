import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { newUser, openSession, startPay, startPaymentTest, transferFor, unary, type PaymentTest } from './support/payments.ts';

// docs/payments.md shows every message as one-line JSON. The server's messages here must carry
// exactly the documented fields (the others stay empty) with the documented fixed values.
const doc = readFileSync('docs/payments.md', 'utf8');

/** The one-line JSON example that follows `marker` in the doc. */
function example(marker: string, after = 0): Record<string, string> {
  const start = doc.indexOf(marker, after);
  assert.ok(start >= 0, `docs/payments.md has "${marker}"`);
  const match = /`(\{"[^`]*\})`/.exec(doc.slice(start));
  assert.ok(match, `a JSON example after "${marker}"`);
  return JSON.parse(match[1]!);
}

/** The fields a message actually sets: proto3 leaves the others at '', '0' or the enum's zero (START_PAY). */
function setFields(content: Record<string, unknown>): string[] {
  return Object.entries(content).filter(([k, v]) => v !== '' && v !== '0' && !(k === 'state' && v === 'START_PAY')).map(([k]) => k).sort();
}

function assertMatchesDoc(content: Record<string, unknown>, documented: Record<string, string>, fixed: string[]) {
  assert.deepEqual(setFields(content), Object.keys(documented).sort());
  for (const key of fixed) assert.equal(content[key], documented[key], key);
}

let p: PaymentTest;
let store: { tid: string; apiKey: string; settlementAddress: string };
before(async () => {
  p = await startPaymentTest();
  store = await p.t.platform.payments.addStore({ tid: 'T-1001', name: 'Corner Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
});
after(async () => { await p?.stop(); });

test('the payment approval messages are as documented', async () => {
  const user = await newUser(p, '100');
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  // The app's START_PAY is docs/interfaces.md#grpc-payments's: only state. The POS sends the QR code's user_uuid, the user's id.
  const appStart = example('1. App → server, DoPayment START_PAY');
  assert.deepEqual(appStart, { state: 'START_PAY' });
  app.send(appStart);
  const posStart = startPay(p, store.tid, 'TR0001', user, user.userId, '15000');
  assert.deepEqual(Object.keys(posStart).sort(), Object.keys(example('2. POS → server, StartPayment START_PAY')).sort());
  pos.send(posStart);
  const appRequest = await app.next();
  const posRequest = await pos.next();
  assertMatchesDoc(appRequest.content, example('3. Server → app, DoPayment REQUEST_TRANSFER'),
    ['state', 'tran_no', 'token_amount', 'store_name', 'transfer_comment', 'exchange_rate', 'exchange_amount']);
  assertMatchesDoc(posRequest.content, example('4. Server → POS, StartPayment REQUEST_TRANSFER'), ['state', 'tran_no']);
  app.send(await transferFor(p, user, appRequest));
  const posEnd = await pos.next();
  const appEnd = await app.next();
  const documentedEnd = example('6. Server → POS, StartPayment END_PAY');
  assertMatchesDoc(posEnd.content, documentedEnd, ['state', 'tran_no', 'token_symbol', 'token_amount', 'exchange_rate', 'exchange_amount']);
  const { approval_no: _n, approval_date: _d, ...withoutApproval } = documentedEnd;
  assertMatchesDoc(appEnd.content, withoutApproval, ['state', 'tran_no', 'token_amount']);

  const cancelRequest = example('Request:', doc.indexOf('## CancelPayment'));
  const cancelled = await unary(p.client, 'CancelPayment', store.apiKey, {
    ...cancelRequest, tid: store.tid, transfer_transaction_id: posEnd.content.transfer_transaction_id,
    contract_address: posEnd.content.contract_address, user_address: user.address,
  });
  assert.equal(cancelled.common.res_code, '00');
  assertMatchesDoc(cancelled.content, example('Response:', doc.indexOf('## CancelPayment')), ['token_symbol', 'token_amount', 'exchange_amount']);
});

test('the IssueReward exchange is as documented', async () => {
  await p.t.platform.wallet.mint('ethereum', { to: store.settlementAddress, amount: '50' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
  const request = example('Request:', doc.indexOf('### IssueReward'));
  const issued = await unary(p.client, 'IssueReward', store.apiKey, { ...request, tid: store.tid });
  assert.equal(issued.common.res_code, '00');
  assertMatchesDoc(issued.content, example('Response:', doc.indexOf('### IssueReward')), ['token_symbol', 'token_amount', 'exchange_rate', 'exchange_amount']);
  assert.match(issued.content.reward_id, /^[0-9A-F]{24}$/);
});
