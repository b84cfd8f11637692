import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseUnits } from 'viem';
import { cancelPayment, refundTransferReference, settleStaleCancellation, settleStaleCancellations } from './cancel-payment.ts';
import { openPaymentsParts, randomHash, usdx, userToken, vixp, webhooksOf, type PaymentsParts } from '../../test/support/payments-parts.ts';

// CancelPayment's domain run on a real SQLite store and the real payment repository (its refund
// reservation is the repository's compare-and-set); the chain is the stand-in of
// test/support/payments-parts.ts. A refund is never more than what was paid, never paid twice.

const VIXP = (n: string) => parseUnits(n, 18);
/** The cancellations asked of the chain so far, by their refunds' references. */
const cancellationsOf = async (parts: PaymentsParts) => Promise.all(parts.chain.transfers.map((t) => parts.deps.payments.findCancellation(t.reference.slice('payment-cancel:'.length)).then((c) => c!)));

async function withParts(body: (parts: PaymentsParts) => Promise<void>) {
  const parts = await openPaymentsParts();
  try { await body(parts); } finally { await parts.dispose(); }
}

let counter = 0;
/** An approved payment as StartPayment leaves it: the user's tokens moved to the store, in transaction `tx`. */
async function approvedPayment(parts: PaymentsParts, options: { user?: string; units?: bigint; tx?: string; contractAddress?: string; tid?: string; tokenSymbol?: string } = {}) {
  const id = randomUUID();
  const tranNo = `P${++counter}`;
  const user = options.user ?? parts.newUser().address;
  const units = options.units ?? VIXP('10');
  const contractAddress = options.contractAddress ?? vixp.contractAddress;
  const tx = options.tx ?? randomHash();
  const tid = options.tid ?? parts.shop.tid;
  assert.ok((await parts.deps.payments.claimTranNo({ id, tid, tranNo, userUuid: `u-${id}`, settlementAddress: parts.shop.settlementAddress, network: 'ethereum', exchangeAmount: '10000', exchangeCurrency: 'KRW', runBy: 'instance' }, parts.now)).claimed);
  await parts.deps.payments.recordQuote(id, { userAddress: user, contractAddress, tokenSymbol: options.tokenSymbol ?? 'VIXP', tokenAmount: units.toString(), exchangeRate: '1000', exchangeDateIndex: '2026112800001' }, parts.now);
  assert.ok(await parts.deps.payments.markApproved(id, { transferTransactionId: tx, approvalNo: `20261127${String(counter).padStart(8, '0')}`, approvalDate: '20261127030000' }, parts.now));
  parts.chain.mint(parts.shop.settlementAddress, units, contractAddress);
  parts.now += 1000;
  return { id, tranNo, user, tx, units };
}

const cancel = (parts: PaymentsParts, request: Partial<Parameters<typeof cancelPayment>[2]> & { transferTransactionId: string }) =>
  cancelPayment(parts.deps, parts.shop, { tid: parts.shop.tid, ...request });

test('a full refund: the payer gets back what was paid, in one custodial transfer; the cancellation is numbered; a second one is refused', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const answer = await cancel(parts, { transferTransactionId: paid.tx });
  const refund = parts.chain.transfers[0]!;
  assert.deepEqual(answer, {
    contractAddress: vixp.contractAddress, tokenSymbol: 'VIXP', userAddress: paid.user, tokenAmount: '10', exchangeAmount: '10000',
    transferTransactionId: await parts.chain.txHashOf(refund.reference), approvalNo: '2026112800000001', approvalDate: '20261128030001',
  });
  assert.deepEqual({ ...refund, reference: refund.reference.replace(/[0-9a-f-]{36}$/, 'ID') },
    { kind: 'custody', reference: 'payment-cancel:ID', amount: '10', from: parts.shop.settlementAddress, to: paid.user, contractAddress: vixp.contractAddress });
  assert.equal(parts.chain.balanceOf(paid.user), VIXP('10'));
  assert.equal(parts.chain.balanceOf(parts.shop.settlementAddress), 0n);
  const payment = (await parts.deps.payments.findPayment(paid.id))!;
  assert.equal(payment.refundedAmount, VIXP('10').toString());
  const [stored] = await parts.deps.payments.listCancellations(paid.id);
  assert.deepEqual([stored!.status, stored!.cancelNo, stored!.transferTransactionId], ['done', answer.approvalNo, answer.transferTransactionId]);
  assert.equal(refund.reference, refundTransferReference(stored!.id));
  assert.deepEqual(await webhooksOf(parts), [{ type: 'payment.canceled', tid: parts.shop.tid, data: {
    tid: parts.shop.tid, tran_no: paid.tranNo, payment_transfer_transaction_id: paid.tx, contract_address: vixp.contractAddress, token_symbol: 'VIXP',
    user_address: paid.user, token_amount: '10', exchange_amount: '10000', transfer_transaction_id: answer.transferTransactionId,
    approval_no: answer.approvalNo, approval_date: answer.approvalDate, res_code: '00', res_message: 'Success',
  } }]);
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx }), { code: 'payment.already_canceled' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1' }), { code: 'payment.already_canceled' });
  assert.equal(parts.chain.transfers.length, 1);
}));

test('partial refunds: never more than what is left; the rest refunded by an empty amount; the exchange amount as the POS gave it', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const first = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '3', exchangeAmount: '3000' });
  assert.deepEqual([first.tokenAmount, first.exchangeAmount], ['3', '3000']);
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '7.000000000000000001' }), { code: 'payment.bad_cancel_amount', message: /left to refund \(7\)/ });
  const second = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '2' });
  assert.deepEqual([second.tokenAmount, second.exchangeAmount], ['2', ''], 'no exchange amount given: none');
  assert.notEqual(second.approvalNo, first.approvalNo);
  const rest = await cancel(parts, { transferTransactionId: paid.tx, exchangeAmount: '1' });
  assert.deepEqual([rest.tokenAmount, rest.exchangeAmount], ['5', '1']);
  assert.equal(parts.chain.balanceOf(paid.user), VIXP('10'));
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, VIXP('10').toString());
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '0.1' }), { code: 'payment.already_canceled' });
  // The whole amount named: the payment's own exchange amount, whatever the POS sent.
  const whole = await approvedPayment(parts);
  assert.equal((await cancel(parts, { transferTransactionId: whole.tx, tokenAmount: '10', exchangeAmount: '5' })).exchangeAmount, '10000');
}));

test('what is refused: another tid, no transaction, another store\'s payment, another payer, another token, a token no longer settling', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  await assert.rejects(cancelPayment(parts.deps, parts.shop, { tid: 'T9999', transferTransactionId: paid.tx }), { code: 'request.unauthorized', details: 'tid' });
  await assert.rejects(cancel(parts, { transferTransactionId: '' }), { code: 'request.invalid', details: 'transfer_transaction_id' });
  await assert.rejects(cancel(parts, { transferTransactionId: randomHash() }), { code: 'payment.not_found' });
  const elsewhere = await approvedPayment(parts, { tid: 'T0002' });
  await assert.rejects(cancel(parts, { transferTransactionId: elsewhere.tx }), { code: 'payment.not_found' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, userAddress: parts.newUser().address }), { code: 'request.invalid', details: 'user_address' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, contractAddress: usdx.contractAddress }), { code: 'request.invalid', details: 'contract_address' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, contractAddress: userToken.contractAddress }), { code: 'payment.token_not_accepted' });
  assert.equal(parts.chain.transfers.length, 0);
  const answer = await cancel(parts, { transferTransactionId: paid.tx, contractAddress: vixp.contractAddress.toLowerCase(), userAddress: paid.user.toLowerCase() });
  assert.equal(answer.tokenAmount, '10');
  // A payment in a token since taken off the allow-list is not refunded.
  const inUsdx = await approvedPayment(parts, { contractAddress: usdx.contractAddress, units: 2_000_000n, tokenSymbol: 'USDX' });
  await parts.store.db.deleteFrom('settlement_tokens').execute();
  await assert.rejects(cancel(parts, { transferTransactionId: inUsdx.tx }), { code: 'payment.token_not_accepted' });
}));

test('a refund in an allowed token moves that token in its own units', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts, { contractAddress: usdx.contractAddress, units: 2_500_000n, tokenSymbol: 'USDX' });
  const answer = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1.5', contractAddress: usdx.contractAddress });
  assert.deepEqual([answer.contractAddress, answer.tokenSymbol, answer.tokenAmount], [usdx.contractAddress, 'USDX', '1.5']);
  assert.equal(parts.chain.balanceOf(paid.user, usdx.contractAddress), 1_500_000n);
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1.0000001' }), { code: 'request.invalid' });
}));

test('one transaction carrying several payments: the payer named decides; two of one payer refund the oldest with something left', () => withParts(async (parts) => {
  const tx = randomHash();
  const alice = parts.newUser().address;
  const bob = parts.newUser().address;
  const a1 = await approvedPayment(parts, { user: alice, tx, units: VIXP('1') });
  const b1 = await approvedPayment(parts, { user: bob, tx, units: VIXP('2') });
  await assert.rejects(cancel(parts, { transferTransactionId: tx }), { code: 'request.invalid', details: 'user_address', message: /several users/ });
  assert.equal((await cancel(parts, { transferTransactionId: tx, userAddress: bob })).tokenAmount, '2');
  assert.equal((await parts.deps.payments.findPayment(b1.id))!.refundedAmount, VIXP('2').toString());
  assert.equal((await parts.deps.payments.findPayment(a1.id))!.refundedAmount, '0');
  const a2 = await approvedPayment(parts, { user: alice, tx, units: VIXP('3') });
  assert.equal((await cancel(parts, { transferTransactionId: tx, userAddress: alice.toLowerCase() })).tokenAmount, '1', 'the oldest first');
  assert.equal((await cancel(parts, { transferTransactionId: tx, userAddress: alice })).tokenAmount, '3', 'then the next');
  assert.equal((await parts.deps.payments.findPayment(a2.id))!.refundedAmount, VIXP('3').toString());
  await assert.rejects(cancel(parts, { transferTransactionId: tx, userAddress: alice }), { code: 'payment.already_canceled' });
  // A single payer's batch needs no user_address.
  const tx2 = randomHash();
  await approvedPayment(parts, { user: alice, tx: tx2, units: VIXP('1') });
  await approvedPayment(parts, { user: alice, tx: tx2, units: VIXP('1') });
  assert.equal((await cancel(parts, { transferTransactionId: tx2 })).tokenAmount, '1');
}));

test('two cancellations at once: compare-and-set on the refunded total, both reserved, never more than paid', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const [a, b] = await Promise.all([
    cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '4' }),
    cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '6' }),
  ]);
  assert.deepEqual([a.tokenAmount, b.tokenAmount], ['4', '6']);
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, VIXP('10').toString());
  const again = await approvedPayment(parts);
  const results = await Promise.allSettled([
    cancel(parts, { transferTransactionId: again.tx, tokenAmount: '6' }),
    cancel(parts, { transferTransactionId: again.tx, tokenAmount: '6' }),
  ]);
  assert.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  assert.equal((results.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.code, 'payment.bad_cancel_amount');
  assert.equal(parts.chain.balanceOf(again.user), VIXP('6'));
}));

test('a refused refund frees its amount; one sent and not settled keeps it reserved, so it is never refunded twice', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  parts.chain.script.push({ kind: 'refused', code: 'wallet.insufficient_balance' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx }), { code: 'wallet.insufficient_balance' });
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, '0');
  assert.deepEqual((await cancellationsOf(parts)).map((c) => c.status), ['failed']);
  parts.chain.script.push({ kind: 'pending' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '4' }), { code: 'chain.outcome_pending' });
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, VIXP('4').toString());
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '7' }), { code: 'payment.bad_cancel_amount' });
  assert.equal((await cancel(parts, { transferTransactionId: paid.tx })).tokenAmount, '6');
}));

test('with a tran_no: a retry answers the first cancellation and refunds nothing more; other parameters are refused', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const first = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '4', tranNo: 'C1' });
  assert.deepEqual(await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '4', tranNo: 'C1' }), first);
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '5', tranNo: 'C1' }), { code: 'request.invalid', details: 'tran_no' });
  assert.equal(parts.chain.transfers.length, 1);
  assert.equal(parts.chain.balanceOf(paid.user), VIXP('4'));
}));

test('an interrupted cancellation is settled from its refund on chain: used completes it, cancelled fails it and frees its amount, open stays pending', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  for (let i = 0; i < 3; i++) parts.chain.script.push({ kind: 'pending' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1', tranNo: 'C1' }), { code: 'chain.outcome_pending' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '2', tranNo: 'C2' }), { code: 'chain.outcome_pending' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '3', tranNo: 'C3' }), { code: 'chain.outcome_pending' });
  const [c1, c2, c3] = await cancellationsOf(parts);
  assert.equal(await settleStaleCancellations(parts.deps), 0, 'not stale yet');
  await parts.chain.settle(refundTransferReference(c1!.id), 'used');
  await parts.chain.settle(refundTransferReference(c2!.id), 'canceled');
  // Within the window a retry is in progress.
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1', tranNo: 'C1' }), { code: 'payment.in_progress' });
  parts.now += 60_001;
  // The POS's retry of C1 answers its refund, numbered now.
  const answered = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1', tranNo: 'C1' });
  assert.deepEqual([answered.tokenAmount, answered.transferTransactionId, answered.userAddress, answered.exchangeAmount],
    ['1', await parts.chain.txHashOf(refundTransferReference(c1!.id)), paid.user, '']);
  assert.equal(await settleStaleCancellations(parts.deps), 1, 'C2 failed; C3 still open');
  assert.deepEqual((await cancellationsOf(parts)).map((c) => [c.tokenAmount, c.status]),
    [[VIXP('1').toString(), 'done'], [VIXP('2').toString(), 'failed'], [VIXP('3').toString(), 'pending']]);
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, VIXP('4').toString(), 'C2\'s amount refundable again');
  assert.equal(await settleStaleCancellation(parts.deps, c3!.id), 'pending');
  assert.equal(await settleStaleCancellation(parts.deps, c2!.id), 'rerun');
  assert.equal(await settleStaleCancellation(parts.deps, randomUUID()), 'rerun');
  const done = await settleStaleCancellation(parts.deps, c1!.id);
  assert.deepEqual(done, { outcome: answered }, 'a done cancellation answers what was answered');
  // C2 retried: it runs again and refunds its 2, with the next number (none spent on C1 again).
  const rerun = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '2', tranNo: 'C2' });
  assert.equal(rerun.tokenAmount, '2');
  assert.equal(BigInt(rerun.approvalNo) - BigInt(answered.approvalNo), 1n);
  assert.equal(parts.chain.balanceOf(paid.user), VIXP('3'));
  await parts.chain.settle(refundTransferReference(c3!.id), 'used');
  assert.equal(await settleStaleCancellations(parts.deps), 1);
  assert.equal(parts.chain.balanceOf(paid.user), VIXP('6'));
  assert.equal((await parts.deps.payments.findPayment(paid.id))!.refundedAmount, VIXP('6').toString());
}));

test('what the operator reads: each refusal\'s message and field', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const cases: [Partial<Parameters<typeof cancelPayment>[2]>, object][] = [
    [{ tid: 'T9999' }, { code: 'request.unauthorized', message: 'tid is not the store of this API key' }],
    [{ transferTransactionId: '' }, { message: 'transfer_transaction_id is required' }],
    [{ transferTransactionId: randomHash() }, { message: 'no approved payment of this store with this transfer_transaction_id' }],
    [{ userAddress: parts.newUser().address }, { message: 'user_address is not the payer of this payment' }],
    [{ contractAddress: usdx.contractAddress }, { message: 'contract_address is not the token of this payment' }],
    [{ tokenAmount: '1.x' }, { code: 'request.invalid', details: 'token_amount' }],
  ];
  for (const [overrides, expected] of cases) {
    const error = await cancelPayment(parts.deps, parts.shop, { tid: parts.shop.tid, transferTransactionId: paid.tx, ...overrides }).then(() => undefined, (e: unknown) => e);
    for (const [name, value] of Object.entries(expected)) assert.equal((error as Record<string, unknown>)[name], value, `${JSON.stringify(overrides)}: ${name}`);
  }
  await cancel(parts, { transferTransactionId: paid.tx });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx }), { message: 'this payment is already fully canceled' });
}));

test('an approved payment without its payer or amount recorded is not refundable (not found)', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  await parts.store.db.updateTable('payments').set({ user_address: null }).where('id', '=', paid.id).execute();
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx }), { code: 'payment.not_found' });
  await parts.store.db.updateTable('payments').set({ user_address: paid.user, token_amount: null }).where('id', '=', paid.id).execute();
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx }), { code: 'payment.not_found' });
  assert.equal(parts.chain.transfers.length, 0);
}));

test('a reservation lost to other cancellations again and again: internal after 22 tries, nothing moved', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts);
  const real = parts.deps.payments;
  let tries = 0;
  const lost = { ...real, reserveRefund: async () => { tries++; return false; } };
  await assert.rejects(cancelPayment({ ...parts.deps, payments: lost }, parts.shop, { tid: parts.shop.tid, transferTransactionId: paid.tx }), { code: 'internal', message: 'could not reserve the refund' });
  assert.equal(tries, 22);
  assert.equal(parts.chain.transfers.length, 0);
}));

test('a stale cancellation settled by the sweep and a POS retry at once: one number, both answer the same', () => withParts(async (parts) => {
  const paid = await approvedPayment(parts, { contractAddress: usdx.contractAddress, units: 3_000_000n, tokenSymbol: 'USDX' });
  parts.chain.script.push({ kind: 'pending' });
  await assert.rejects(cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1.25' }), { code: 'chain.outcome_pending' });
  const [pending] = await cancellationsOf(parts);
  await parts.chain.settle(refundTransferReference(pending!.id), 'used');
  // Settled on chain but not yet stale: the sweep leaves it.
  assert.equal(await settleStaleCancellations(parts.deps), 0);
  parts.now += 60_001;
  const [a, b] = await Promise.all([settleStaleCancellation(parts.deps, pending!.id), settleStaleCancellation(parts.deps, pending!.id)]);
  assert.deepEqual(a, b);
  const outcome = (a as { outcome: { tokenAmount: string; tokenSymbol: string; approvalNo: string } }).outcome;
  assert.deepEqual([outcome.tokenAmount, outcome.tokenSymbol], ['1.25', 'USDX']);
  assert.equal((await parts.deps.payments.findCancellation(pending!.id))!.cancelNo, outcome.approvalNo);
  // Asked again once done: answered from the record, no number spent.
  assert.deepEqual(await settleStaleCancellation(parts.deps, pending!.id), a);
  const next = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '1' });
  assert.equal(BigInt(next.approvalNo) - BigInt(outcome.approvalNo) <= 2n, true, 'at most the loser\'s number between');
  const again = await cancel(parts, { transferTransactionId: paid.tx, tokenAmount: '0.5' });
  assert.equal(BigInt(again.approvalNo) - BigInt(next.approvalNo), 1n);
}));
