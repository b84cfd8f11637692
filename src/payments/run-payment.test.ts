import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits } from 'viem';
import { createPaymentRepository } from '../store/payment-repository.ts';
import { DomainError } from '../shared/errors.ts';
import { runPayment, type StartPaymentRequest } from './run-payment.ts';
import { approvalOf } from './payment-approval.ts';
import { paymentTransferReference } from './settle-stale-payment.ts';
import type { SessionEvent } from '../pairing/session-events.ts';
import { connectApp, openPaymentsParts, posSide, usdx, userToken, vixp, webhooksOf, type PaymentsParts } from '../../test/support/payments-parts.ts';

// StartPayment's domain run on a real SQLite store, the real payment repository and the in-process
// pairing desk; the chain is the stand-in of test/support/payments-parts.ts (the anvil runs are
// test/payments.test.ts and test/money-safety.test.ts). What a POS and the user's app see, and that a
// tran_no is paid once.

const VIXP = (n: string) => parseUnits(n, 18);
let tranCounter = 0;
const newTranNo = () => `TRN${String(++tranCounter).padStart(6, '0')}`;

function request(parts: PaymentsParts, user: { userUuid: string }, overrides: Partial<StartPaymentRequest> = {}): StartPaymentRequest {
  return { tid: parts.shop.tid, tranNo: newTranNo(), exchangeAmount: '10000', userUuid: user.userUuid, expirationTime: 0, ...overrides };
}

/** The error's named fields (message, code, details) are these. */
const assertError = (error: unknown, expected: object) => {
  for (const [name, value] of Object.entries(expected)) assert.equal((error as Record<string, unknown>)[name], value, name);
};
const normalized = (amount: string) => String(Number(amount));
const lastOf = (events: SessionEvent[]) => events.at(-1);
const failureOf = (events: SessionEvent[]) => {
  const last = lastOf(events);
  assert.equal(last?.type, 'failed', `a failure, not ${JSON.stringify(last)}`);
  return (last as Extract<SessionEvent, { type: 'failed' }>);
};
const approvalIn = (events: SessionEvent[]) => {
  const last = lastOf(events);
  assert.equal(last?.type, 'end_pay', `END_PAY, not ${JSON.stringify(last)}`);
  return (last as Extract<SessionEvent, { type: 'end_pay' }>).approval;
};

async function withParts(body: (parts: PaymentsParts) => Promise<void>, options?: Parameters<typeof openPaymentsParts>[0]) {
  const parts = await openPaymentsParts(options);
  try { await body(parts); } finally { await parts.dispose(); }
}

test('a payment: REQUEST_TRANSFER with the exact quote, one transfer, END_PAY to both sides with the approval numbered', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('25'));
  const app = connectApp(parts, user);
  const pos = posSide();
  const req = request(parts, user);
  await runPayment(parts.deps, parts.shop, req, pos);

  assert.deepEqual(pos.events.map((e) => e.type), ['transfer_pending', 'end_pay']);
  assert.deepEqual(pos.events[0], { type: 'transfer_pending', tranNo: req.tranNo });
  assert.deepEqual(app.events[0], {
    type: 'request_transfer', request: {
      tranNo: req.tranNo, contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', tokenAmount: '10', settlementAddress: parts.shop.settlementAddress,
      storeName: 'Corner Shop', transferComment: `Corner Shop ${req.tranNo}`, exchangeDateIndex: '2026112800001', exchangeRate: '1000',
      exchangeAmount: '10000', exchangeCurrency: 'KRW',
    },
  });
  const approval = approvalIn(pos.events);
  const payment = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
  assert.equal(payment.status, 'approved');
  assert.deepEqual(approval, {
    tranNo: req.tranNo, contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', userAddress: user.address, tokenAmount: '10',
    transferTransactionId: await parts.chain.txHashOf(paymentTransferReference(payment.id)), approvalNo: '2026112800000001',
    approvalDate: '20261128030000', exchangeDateIndex: '2026112800001', exchangeRate: '1000', exchangeAmount: '10000', exchangeCurrency: 'KRW',
  });
  assert.deepEqual(app.events.at(-1), { type: 'end_pay', approval });
  assert.deepEqual(parts.chain.transfers, [{
    kind: 'payment', reference: `payment:${payment.id}`, amount: '10', from: user.address, to: parts.shop.settlementAddress,
    contractAddress: vixp.contractAddress, tempKey: 'temp-key',
  }]);
  assert.equal(parts.chain.balanceOf(user.address), VIXP('15'));
  assert.equal(parts.chain.balanceOf(parts.shop.settlementAddress), VIXP('10'));
  assert.deepEqual({ tx: payment.transferTransactionId, no: payment.approvalNo, date: payment.approvalDate, amount: payment.tokenAmount, userAddress: payment.userAddress },
    { tx: approval.transferTransactionId, no: '2026112800000001', date: '20261128030000', amount: VIXP('10').toString(), userAddress: user.address });
  assert.deepEqual(await approvalOf(parts.deps, payment), approval, 'a retry answers the same END_PAY');
  assert.deepEqual(await webhooksOf(parts), [{ type: 'payment.approved', tid: parts.shop.tid, data: {
    tid: parts.shop.tid, tran_no: req.tranNo, user_address: user.address, contract_address: vixp.contractAddress, token_symbol: 'VIXP', token_amount: '10',
    transfer_transaction_id: approval.transferTransactionId, approval_no: approval.approvalNo, approval_date: approval.approvalDate,
    exchange_date_index: '2026112800001', exchange_rate: '1000', exchange_amount: '10000', exchange_currency: 'KRW', res_code: '00', res_message: 'Success',
  } }], 'the store\'s webhook, written with the approval');
}));

test('a retry of an approved tran_no answers the original approval to the POS and a waiting app, and pays nothing more', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('100'));
  connectApp(parts, user);
  const req = request(parts, user);
  const first = posSide();
  await runPayment(parts.deps, parts.shop, req, first);
  const approval = approvalIn(first.events);
  parts.now += 60_000;
  const waiting = connectApp(parts, user);
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, { ...req, exchangeAmount: '99999' }, retry);
  assert.deepEqual(retry.events, [{ type: 'end_pay', approval }]);
  assert.deepEqual(waiting.events, [{ type: 'end_pay', approval }], 'the app of that user_uuid, still waiting, hears the approval');
  assert.equal(parts.chain.transfers.length, 1, 'one transfer for the tran_no');
  assert.equal(parts.chain.balanceOf(user.address), VIXP('90'));
}));

test('refused before the attempt: a bad tran_no or user_uuid, another store\'s tid; a waiting app is told', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('100'));
  for (const [overrides, code, details] of [
    [{ tranNo: '' }, 'request.invalid', 'tran_no'],
    [{ tranNo: 'x'.repeat(129) }, 'request.invalid', 'tran_no'],
    [{ tid: 'T9999' }, 'request.unauthorized', 'tid'],
    [{ exchangeAmount: 'ten' }, 'request.invalid', 'exchange_amount'],
  ] as const) {
    const app = connectApp(parts, user);
    await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, overrides), posSide()), { code, details }, JSON.stringify(overrides));
    const failed = failureOf(app.events);
    assert.equal(failed.error.code, code);
    assert.equal(failed.tranNo, overrides.tranNo ?? failed.tranNo);
  }
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { userUuid: '' }), posSide()), { code: 'request.invalid', details: 'user_uuid' });
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { userUuid: 'u'.repeat(129) }), posSide()), { code: 'request.invalid', details: 'user_uuid' });
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { tranNo: 5 as never }), posSide()), { code: 'request.invalid', details: 'tran_no' });
  assert.equal(parts.chain.transfers.length, 0);
  // 128 characters is a tran_no.
  connectApp(parts, user);
  const pos = posSide();
  await runPayment(parts.deps, parts.shop, request(parts, user, { tranNo: 't'.repeat(128), userUuid: user.userUuid }), pos);
  assert.equal(approvalIn(pos.events).tranNo, 't'.repeat(128));
}));

test('a tran_no in progress (live, on this instance) is refused 13 without touching the running attempt', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('100'));
  const app = connectApp(parts, user, { transfer: false });
  const req = request(parts, user);
  const first = posSide();
  const running = runPayment(parts.deps, parts.shop, req, first);
  while (app.events.length === 0) await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(runPayment(parts.deps, parts.shop, req, posSide()), { code: 'payment.in_progress', details: 'tran_no' });
  first.hangUp();
  await running;
  assert.equal(failureOf(first.events).error.code, 'payment.canceled_by_user');
  assert.equal((await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))?.status, 'failed');
}));

test('failures before the transfer leave balances untouched, record the code and free the tran_no', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  const cases: [string, Partial<StartPaymentRequest>, { transfer?: boolean; hangUp?: boolean } | undefined, string][] = [
    ['expired QR', { expirationTime: Math.floor(parts.now / 1000) }, undefined, 'payment.expired'],
    ['a user\'s own token', { contractAddress: userToken.contractAddress }, undefined, 'payment.token_not_accepted'],
    ['another account in the QR code', { userAddress: '0x00000000000000000000000000000000000000ff' }, {}, 'request.invalid'],
    ['more than the balance', { exchangeAmount: '10001' }, {}, 'wallet.insufficient_balance'],
    ['no rate notice', { exchangeCurrency: 'USD' }, {}, 'payment.no_rate_notice'],
    ['no rate notice for the token in that currency', { exchangeCurrency: 'USD', tokenSymbol: 'USDX' }, {}, 'payment.no_rate_notice'],
    ['the app hangs up', { exchangeAmount: '1000' }, { hangUp: true }, 'payment.canceled_by_user'],
  ];
  for (const [what, overrides, appOptions, code] of cases) {
    const app = connectApp(parts, user, appOptions ?? {});
    const pos = posSide();
    const req = request(parts, user, overrides);
    await runPayment(parts.deps, parts.shop, req, pos);
    const failed = failureOf(pos.events);
    assert.equal(failed.error.code, code, what);
    assert.equal(failed.tranNo, req.tranNo, what);
    assert.equal(failureOf(app.events).error.code, code, `${what}: the app hears it`);
    const payment = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
    assert.deepEqual([payment.status, payment.failureCode], ['failed', code], what);
    assert.deepEqual((await webhooksOf(parts)).filter((w) => w.data.tran_no === req.tranNo), [{ type: 'payment.failed', tid: parts.shop.tid, data: {
      tid: parts.shop.tid, tran_no: req.tranNo, exchange_amount: normalized(req.exchangeAmount), exchange_currency: req.exchangeCurrency ?? 'KRW', failure_code: code,
    } }], what);
    if (!appOptions) assert.deepEqual(app.events.map((e) => e.type), ['failed'], `${what}: refused before the app is asked to pay`);
    // The tran_no may be tried again, and pays once.
    if (code !== 'payment.canceled_by_user') {
      connectApp(parts, user);
      const again = posSide();
      await runPayment(parts.deps, parts.shop, {
        ...req, expirationTime: 0, contractAddress: undefined as never, tokenSymbol: undefined as never, userAddress: undefined as never, exchangeAmount: '1000', exchangeCurrency: undefined as never,
      }, again);
      assert.equal(approvalIn(again.events).tokenAmount, '1', what);
    }
  }
  assert.deepEqual(parts.chain.transfers.map((t) => t.amount), ['1', '1', '1', '1', '1', '1'], 'only the retries transferred');
  assert.equal(parts.chain.balanceOf(user.address), VIXP('4'));
}));

test('the exact balance pays; the QR code\'s account in another case is the same account; a QR code expiring later pays', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  connectApp(parts, user);
  const pos = posSide();
  await runPayment(parts.deps, parts.shop, request(parts, user, { userAddress: user.address.toLowerCase(), expirationTime: Math.floor(parts.now / 1000) + 1 }), pos);
  assert.equal(approvalIn(pos.events).userAddress, user.address);
  assert.equal(parts.chain.balanceOf(user.address), 0n);
}));

test('an allowed token named by contract or symbol settles in its own units; the symbol alone of VIXP is VIXP', () => withParts(async (parts) => {
  const user = parts.newUser();
  parts.chain.mint(user.address, 5_000_000n, usdx.contractAddress);
  for (const named of [{ contractAddress: usdx.contractAddress }, { tokenSymbol: 'USDX' }]) {
    connectApp(parts, user);
    const pos = posSide();
    await runPayment(parts.deps, parts.shop, request(parts, user, { exchangeAmount: '2500', ...named }), pos);
    const approval = approvalIn(pos.events);
    assert.deepEqual([approval.contractAddress, approval.tokenSymbol, approval.tokenAmount], [usdx.contractAddress, 'USDX', '2.5']);
  }
  assert.equal(parts.chain.balanceOf(user.address, usdx.contractAddress), 0n);
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { tokenSymbol: 'MINE' }), posSide()).then(() => { throw new Error('answered'); }), /answered/);
  const other = parts.newUser(VIXP('1'));
  connectApp(parts, other);
  const pos = posSide();
  await runPayment(parts.deps, parts.shop, request(parts, other, { tokenSymbol: 'VIXP', exchangeAmount: '1000', exchangeCurrency: 'KRW' }), pos);
  assert.equal(approvalIn(pos.events).tokenSymbol, 'VIXP');
}));

test('the QR code expiring while the app signs: 03, nothing transferred', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  const app = connectApp(parts, user, { transfer: false });
  const pos = posSide();
  const running = runPayment(parts.deps, parts.shop, request(parts, user, { expirationTime: Math.floor(parts.now / 1000) + 60 }), pos);
  while (app.events.length === 0) await new Promise((r) => setTimeout(r, 5));
  parts.now += 60_000;
  app.connection.submitTransfer({ tempKey: 'k', hashKey: 'h', signature: '0x', comment: '' });
  await running;
  assert.equal(failureOf(pos.events).error.code, 'payment.expired');
  assert.equal(parts.chain.transfers.length, 0);
}));

test('a refused transfer fails the attempt and frees the tran_no; the retry pays once', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  for (const code of ['wallet.signature_invalid', 'chain.transaction_failed'] as const) {
    parts.chain.script.push({ kind: 'refused', code });
    const app = connectApp(parts, user);
    const pos = posSide();
    const req = request(parts, user);
    await runPayment(parts.deps, parts.shop, req, pos);
    assert.equal(failureOf(pos.events).error.code, code);
    assert.equal(failureOf(app.events).error.code, code);
    assert.equal((await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))?.failureCode, code);
    connectApp(parts, user);
    const again = posSide();
    await runPayment(parts.deps, parts.shop, req, again);
    assert.equal(approvalIn(again.events).tokenAmount, '10');
    parts.chain.mint(user.address, VIXP('10'));
  }
  assert.equal(parts.chain.balanceOf(parts.shop.settlementAddress), VIXP('20'));
}));

test('a transfer sent and not settled: the tran_no stays pending (never approved unconfirmed, never reusable); its retry settles it from the chain', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  parts.chain.script.push({ kind: 'pending' });
  connectApp(parts, user);
  const pos = posSide();
  const req = request(parts, user);
  await runPayment(parts.deps, parts.shop, req, pos);
  assert.equal(failureOf(pos.events).error.code, 'chain.outcome_pending');
  const payment = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
  assert.equal(payment.status, 'pending');
  // Retried at once: the chain has not settled it, so it is in progress, and nothing is sent again.
  await assert.rejects(runPayment(parts.deps, parts.shop, req, posSide()), { code: 'payment.in_progress' });
  assert.equal(parts.chain.transfers.length, 1);
  // The chain executes it: the next retry answers the approval.
  await parts.chain.settle(paymentTransferReference(payment.id), 'used');
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  const approval = approvalIn(retry.events);
  assert.equal(approval.transferTransactionId, await parts.chain.txHashOf(paymentTransferReference(payment.id)));
  assert.equal(approval.tokenAmount, '10');
  assert.equal(parts.chain.transfers.length, 1, 'paid once');
  assert.deepEqual(parts.logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields.paymentId, l.fields.tid, l.fields.tranNo]),
    [['stale payment approved from its executed transfer', payment.id, parts.shop.tid, req.tranNo]]);
  assert.deepEqual((await webhooksOf(parts)).map((w) => [w.type, w.data.tran_no, w.data.transfer_transaction_id, w.data.approval_no, w.data.token_amount]),
    [['payment.approved', req.tranNo, approval.transferTransactionId, approval.approvalNo, '10']]);
  // And again: the same approval, no second settlement.
  const third = posSide();
  await runPayment(parts.deps, parts.shop, req, third);
  assert.deepEqual(approvalIn(third.events), approval);
}));

test('a pending transfer the chain cancels: the retry fails the old attempt and runs a new one', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  parts.chain.script.push({ kind: 'pending' });
  connectApp(parts, user);
  const req = request(parts, user);
  await runPayment(parts.deps, parts.shop, req, posSide());
  const first = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
  await parts.chain.settle(paymentTransferReference(first.id), 'canceled');
  connectApp(parts, user);
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  assert.equal(approvalIn(retry.events).tokenAmount, '10');
  assert.deepEqual(parts.chain.transfers.map((t) => t.reference), [`payment:${first.id}`, `payment:${(await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!.id}`]);
  assert.equal(parts.chain.balanceOf(user.address), VIXP('20'));
}));

test('a wallet call that throws: internal (10), logged, the tran_no pending until the chain says nothing moved', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  parts.chain.script.push({ kind: 'throws' });
  const app = connectApp(parts, user);
  const pos = posSide();
  const req = request(parts, user);
  await runPayment(parts.deps, parts.shop, req, pos);
  assertError(failureOf(pos.events).error, { code: 'internal', message: 'the payment failed' });
  assert.equal((failureOf(pos.events).error.cause as Error).message, 'the wallet call failed');
  assert.equal(failureOf(app.events).error.code, 'internal');
  assert.deepEqual(parts.logs.filter((l) => l.level === 'error').map((l) => [l.message, l.fields.tid, l.fields.tranNo]), [['payment failed', parts.shop.tid, req.tranNo]]);
  assert.equal((await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))?.status, 'pending');
  // Nothing was authorized: the retry marks it failed and pays.
  connectApp(parts, user);
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  assert.equal(approvalIn(retry.events).tokenAmount, '10');
  const first = parts.chain.transfers[0]!.reference.slice('payment:'.length);
  assert.deepEqual(parts.logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields.paymentId, l.fields.tid, l.fields.tranNo, l.fields.transfer]),
    [['stale payment without a transfer marked failed', first, parts.shop.tid, req.tranNo, 'void']]);
  assert.deepEqual((await webhooksOf(parts)).map((w) => [w.type, w.data.tran_no, w.data.failure_code ?? w.data.res_code]),
    [['payment.failed', req.tranNo, 'internal'], ['payment.approved', req.tranNo, '00']]);
}));

test('a pending attempt of another live instance stays in progress until the stale window passes or its instance is gone', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const alive = new Set(['instance-a']);
  const deskA = { ...parts.desk, instanceId: 'instance-a', isInstanceAlive: async (id: string) => alive.has(id) };
  const deskB = { ...parts.desk, instanceId: 'instance-b', isInstanceAlive: async (id: string) => alive.has(id) };
  // Instance B: its own process, so its own repository (A's ended runs are A's to know).
  const b = { ...parts.deps, payments: createPaymentRepository(parts.store.db), desk: deskB };
  parts.chain.script.push({ kind: 'pending' });
  connectApp(parts, user);
  const req = request(parts, user);
  await runPayment({ ...parts.deps, desk: deskA }, parts.shop, req, posSide());
  const first = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
  assert.equal(first.runBy, 'instance-a');
  await parts.chain.settle(paymentTransferReference(first.id), 'used');
  // Another instance, A alive, within the window: in progress.
  await assert.rejects(runPayment(b, parts.shop, req, posSide()), { code: 'payment.in_progress' });
  // Without a liveness check (in-process): in progress too.
  await assert.rejects(runPayment({ ...b, desk: { ...deskB, isInstanceAlive: undefined as never } }, parts.shop, req, posSide()), { code: 'payment.in_progress' });
  // A is gone: B settles it from the chain.
  alive.delete('instance-a');
  const retry = posSide();
  await runPayment(b, parts.shop, req, retry);
  assert.equal(approvalIn(retry.events).transferTransactionId, await parts.chain.txHashOf(paymentTransferReference(first.id)));
}));

test('the stale window: pairing window + idle timeout + 5 minutes after the last update, not a millisecond sooner', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const other = { ...parts.desk, instanceId: 'instance-x', isInstanceAlive: async () => true };
  parts.chain.script.push({ kind: 'pending' });
  connectApp(parts, user);
  const req = request(parts, user);
  await runPayment({ ...parts.deps, desk: other }, parts.shop, req, posSide());
  const first = (await parts.deps.payments.findByTranNo(parts.shop.tid, req.tranNo))!;
  await parts.chain.settle(paymentTransferReference(first.id), 'used');
  const me = { ...parts.desk, instanceId: 'instance-y', isInstanceAlive: async () => true };
  const y = { ...parts.deps, payments: createPaymentRepository(parts.store.db), desk: me };
  parts.now = first.updatedAt + 2000 + 2000 + 5 * 60_000;
  await assert.rejects(runPayment(y, parts.shop, req, posSide()), { code: 'payment.in_progress' });
  parts.now += 1;
  const retry = posSide();
  await runPayment(y, parts.shop, req, retry);
  assert.equal(approvalIn(retry.events).tokenAmount, '10');
}));

test('what the operator reads: each refusal\'s message and field', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('1'));
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { tid: 'T9999' }), posSide()), { message: 'tid is not the store of this API key' });
  await assert.rejects(runPayment(parts.deps, parts.shop, request(parts, user, { tranNo: '' }), posSide()), { message: 'tran_no is required (at most 128 characters)' });
  const cases: [Partial<StartPaymentRequest>, { transfer?: boolean } | undefined, object][] = [
    [{ expirationTime: 1 }, undefined, { code: 'payment.expired', message: 'the QR code has expired (expiration_time)' }],
    [{ userAddress: '0x00000000000000000000000000000000000000ff' }, {}, { code: 'request.invalid', details: 'user_address', message: 'user_address of the QR code is not the app user\'s account' }],
    [{}, {}, { code: 'wallet.insufficient_balance', message: 'the user\'s balance is below token_amount' }],
  ];
  for (const [overrides, appOptions, expected] of cases) {
    if (appOptions) connectApp(parts, user, appOptions);
    const pos = posSide();
    await runPayment(parts.deps, parts.shop, request(parts, user, overrides), pos);
    assertError(failureOf(pos.events).error, expected);
  }
  assert.deepEqual(parts.logs, [], 'a domain refusal is no error in the log');
  const payer = parts.newUser(VIXP('10'));
  const req = request(parts, payer);
  const app = connectApp(parts, payer, { transfer: false });
  const pos = posSide();
  const running = runPayment(parts.deps, parts.shop, req, pos);
  while (app.events.length === 0) await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(runPayment(parts.deps, parts.shop, req, posSide()), { message: `tran_no ${req.tranNo} is in progress` });
  pos.hangUp();
  await running;
}));

test('a token that may not settle is refused at once, before any app is waited for', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  for (const named of [{ contractAddress: userToken.contractAddress }, { tokenSymbol: 'MINE' }]) {
    const pos = posSide();
    const started = Date.now();
    await runPayment({ ...parts.deps, pairingWindowMs: 4000 }, parts.shop, request(parts, user, named), pos);
    assert.equal(failureOf(pos.events).error.code, 'payment.token_not_accepted');
    assert.ok(Date.now() - started < 1000, 'not after the pairing window');
  }
}));

test('a QR code expiring before the pairing window ends: the POS waits for an app only until it expires', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('10'));
  const pos = posSide();
  const started = Date.now();
  await runPayment({ ...parts.deps, pairingWindowMs: 4000 }, parts.shop, request(parts, user, { expirationTime: parts.now / 1000 + 0.2 }), pos);
  assert.equal(pos.events.at(-1)?.type, 'failed');
  assert.ok(Date.now() - started < 2000, `waited ${Date.now() - started} ms`);
}));

test('an attempt of this instance is never taken for dead: the desk is asked about other instances only', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const asked: string[] = [];
  const desk = { ...parts.desk, instanceId: 'instance-a', isInstanceAlive: async (id: string) => { asked.push(id); return false; } };
  const app = connectApp(parts, user, { transfer: false });
  const req = request(parts, user);
  const pos = posSide();
  const running = runPayment({ ...parts.deps, desk }, parts.shop, req, pos);
  while (app.events.length === 0) await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(runPayment({ ...parts.deps, desk }, parts.shop, req, posSide()), { code: 'payment.in_progress' });
  assert.deepEqual(asked, []);
  pos.hangUp();
  await running;
  // An attempt recorded without an instance (in-process desk): no instance to ask about either.
  const other = parts.newUser(VIXP('30'));
  const app2 = connectApp(parts, other, { transfer: false });
  const req2 = request(parts, other);
  const pos2 = posSide();
  const running2 = runPayment(parts.deps, parts.shop, req2, pos2);
  while (app2.events.length === 0) await new Promise((r) => setTimeout(r, 5));
  await assert.rejects(runPayment({ ...parts.deps, payments: createPaymentRepository(parts.store.db), desk }, parts.shop, req2, posSide()), { code: 'payment.in_progress' });
  assert.deepEqual(asked, []);
  pos2.hangUp();
  await running2;
}));

test('a retry of an approved tran_no long after: answered from the record, no approval number spent', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  connectApp(parts, user);
  const req = request(parts, user);
  const first = posSide();
  await runPayment(parts.deps, parts.shop, req, first);
  parts.now += 3_600_000;
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  assert.deepEqual(retry.events, first.events.slice(-1));
  connectApp(parts, user);
  const next = posSide();
  await runPayment(parts.deps, parts.shop, request(parts, user), next);
  assert.equal(approvalIn(next.events).approvalNo, '2026112800000002');
  assert.deepEqual(parts.logs, []);
}));

test('a payment in an allowed token retried: END_PAY again in that token', () => withParts(async (parts) => {
  const user = parts.newUser();
  parts.chain.mint(user.address, 5_000_000n, usdx.contractAddress);
  connectApp(parts, user);
  const req = request(parts, user, { exchangeAmount: '2500', tokenSymbol: 'USDX' });
  const first = posSide();
  await runPayment(parts.deps, parts.shop, req, first);
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  assert.deepEqual(approvalIn(retry.events), approvalIn(first.events));
  assert.equal(approvalIn(retry.events).tokenAmount, '2.5');
}));

test('approved meanwhile by a retry that took this run for dead: the recorded approval is the one answered', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const real = parts.deps.payments;
  const markApproved = real.markApproved.bind(real);
  let recorded: string | undefined;
  const raced = async (...args: Parameters<typeof real.markApproved>) => {
    // Another instance's retry settles the attempt from the chain first, with its own number.
    recorded = `2026112899${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}`;
    await markApproved(args[0], { ...args[1], approvalNo: recorded }, args[2]);
    return markApproved(...args);
  };
  connectApp(parts, user);
  const pos = posSide();
  const req = request(parts, user);
  real.markApproved = raced;
  await runPayment(parts.deps, parts.shop, req, pos);
  real.markApproved = markApproved;
  assert.equal(approvalIn(pos.events).approvalNo, recorded);
  // The same race inside a stale settlement: the retry answers the approval recorded.
  parts.chain.script.push({ kind: 'pending' });
  connectApp(parts, user);
  const req2 = request(parts, user);
  await runPayment(parts.deps, parts.shop, req2, posSide());
  const pending = (await real.findByTranNo(parts.shop.tid, req2.tranNo))!;
  await parts.chain.settle(paymentTransferReference(pending.id), 'used');
  const retry = posSide();
  real.markApproved = raced;
  await runPayment(parts.deps, parts.shop, req2, retry);
  real.markApproved = markApproved;
  assert.equal(approvalIn(retry.events).approvalNo, recorded);
}));

test('the disk full after the transfer: 10, never 23 (tokens moved); the retry settles it from the chain', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const real = parts.deps.payments;
  const markApproved = real.markApproved;
  real.markApproved = async () => { throw new DomainError('store.full', 'no space left'); };
  connectApp(parts, user);
  const pos = posSide();
  const req = request(parts, user);
  await runPayment(parts.deps, parts.shop, req, pos);
  real.markApproved = markApproved;
  assertError(failureOf(pos.events).error, { code: 'internal', message: 'the payment\'s outcome could not be recorded' });
  assert.equal((failureOf(pos.events).error.cause as { code: string }).code, 'store.full');
  assert.equal((await real.findByTranNo(parts.shop.tid, req.tranNo))?.status, 'pending');
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, req, retry);
  assert.equal(approvalIn(retry.events).tokenAmount, '10');
  assert.equal(parts.chain.transfers.length, 1);
}));

test('a failure the full disk keeps from being recorded: logged, and the retry records it and runs again at once', () => withParts(async (parts) => {
  const user = parts.newUser(VIXP('30'));
  const real = parts.deps.payments;
  const markFailed = real.markFailed;
  real.markFailed = async () => { throw new DomainError('store.full', 'no space left'); };
  const pos = posSide();
  const req = request(parts, user, { expirationTime: 1 });
  await runPayment(parts.deps, parts.shop, req, pos);
  real.markFailed = markFailed;
  assert.equal(failureOf(pos.events).error.code, 'payment.expired');
  assert.deepEqual(parts.logs.map((l) => [l.level, l.message, l.fields.tid, l.fields.tranNo, (l.fields.err as { code?: string }).code]),
    [['warn', 'failed payment not recorded', parts.shop.tid, req.tranNo, 'store.full']]);
  assert.equal((await real.findByTranNo(parts.shop.tid, req.tranNo))?.status, 'pending');
  connectApp(parts, user);
  const retry = posSide();
  await runPayment(parts.deps, parts.shop, { ...req, expirationTime: 0 }, retry);
  assert.equal(parts.logs.at(-1)?.message, 'stale payment without a transfer marked failed');
  assert.equal(approvalIn(retry.events).tokenAmount, '10');
}));
