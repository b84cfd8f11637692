import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { parseEventLogs, parseUnits, type Hex } from 'viem';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { call } from './support/platform.ts';
import { prepareTransfer } from './support/transfer-scheme.ts';
import {
  balanceOf, newUser, openSession, startPay, startPaymentTest, transferFor, unary, type PaymentTest, type TestUser,
} from './support/payments.ts';

// Transfers that share one settlement transaction: each is still its own, by every interface that
// names a transaction. A wide batch window (400 ms) puts concurrent transfers in one batch for sure.
let p: PaymentTest;
let store: { tid: string; name: string; settlementAddress: string; apiKey: string };
before(async () => {
  p = await startPaymentTest({ SETTLEMENT_BATCH_WINDOW_MS: '400' });
  store = await p.t.platform.payments.addStore({ tid: `SB-${randomUUID().slice(0, 8)}`, name: 'Batch Bakery' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1000' });
});
after(async () => { await p?.stop(); });

const chain = () => p.t.platform.chains[p.t.platform.config.paymentNetwork];

/** A whole payment of `amount` KRW by `user` at the store; answers the POS's END_PAY. */
async function pay(user: TestUser, amount: string) {
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', store.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send(startPay(p, store.tid, `TR${randomUUID().slice(0, 8)}`, user, uuid, amount));
  const request = await app.next();
  await pos.next();
  app.send(await transferFor(p, user, request));
  await app.next();
  return pos.next();
}

describe('transfers in one settlement transaction', () => {
  test('token API: both answered with one TransactionID whose receipt carries each Transfer; getTransferStatus needs fromAddress to tell them apart', async () => {
    const [a, b] = await Promise.all([newUser(p, '10'), newUser(p, '10')]);
    const receiver = await newUser(p);
    const prepared = await Promise.all([prepareTransfer(p.t.app, a, receiver.address, '3'), prepareTransfer(p.t.app, b, receiver.address, '4')]);
    const [ra, rb] = await Promise.all(prepared.map(({ data: _data, ...params }) => call(p.t.app, '/token', 'transfer', params)));
    assert.equal(ra.resultCode, '200', JSON.stringify(ra));
    assert.equal(rb.resultCode, '200', JSON.stringify(rb));
    assert.equal(ra.TransactionID, rb.TransactionID, 'one settlement transaction carried both');

    const receipt = await chain().client.getTransactionReceipt({ hash: ra.TransactionID as Hex });
    const moved = parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs: receipt.logs })
      .map((log) => `${log.args.from.toLowerCase()}>${log.args.to.toLowerCase()}:${log.args.value}`).sort();
    assert.deepEqual(moved, [
      `${a.address.toLowerCase()}>${receiver.address.toLowerCase()}:${parseUnits('3', 18)}`,
      `${b.address.toLowerCase()}>${receiver.address.toLowerCase()}:${parseUnits('4', 18)}`,
    ].sort());

    const ambiguous = await call(p.t.app, '/token', 'getTransferStatus', { transactionId: ra.TransactionID });
    assert.notEqual(ambiguous.resultCode, '200', 'a shared transaction without fromAddress is refused, not answered with someone\'s transfer');
    for (const [user, amount] of [[a, '3'], [b, '4']] as const) {
      const own = await call(p.t.app, '/token', 'getTransferStatus', { transactionId: ra.TransactionID, fromAddress: user.address });
      assert.equal(own.resultCode, '200', JSON.stringify(own));
      assert.equal(own.resultData.fromAddress.toLowerCase(), user.address.toLowerCase());
      assert.equal(own.resultData.amount, amount);
      assert.equal(own.resultData.status, 'confirmed');
    }
  });

  test('CancelPayment of two payments that share a transfer transaction refunds the payer the POS names, each once', async () => {
    const [a, b] = await Promise.all([newUser(p, '20'), newUser(p, '20')]);
    const before = parseUnits(await balanceOf(p, store.settlementAddress), 18);
    const [endA, endB] = await Promise.all([pay(a, '5000'), pay(b, '7000')]);
    assert.equal(endA.common.res_code, '00');
    assert.equal(endB.common.res_code, '00');
    const txId = endA.content.transfer_transaction_id;
    assert.equal(endB.content.transfer_transaction_id, txId, 'both payments were settled in one transaction');
    assert.equal(parseUnits(await balanceOf(p, store.settlementAddress), 18) - before, parseUnits('12', 18));

    const base = { tid: store.tid, transfer_transaction_id: txId, contract_address: endA.content.contract_address, token_symbol: 'VIXP' };
    const unnamed = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, token_amount: '' });
    assert.notEqual(unnamed.common.res_code, '00', 'without user_address the POS is asked to name the payer; nothing is refunded');
    assert.equal(await balanceOf(p, a.address), '15');
    assert.equal(await balanceOf(p, b.address), '13');

    const refundB = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, user_address: b.address, token_amount: '' });
    assert.equal(refundB.common.res_code, '00', JSON.stringify(refundB.common));
    assert.equal(refundB.content.token_amount, '7');
    assert.equal(await balanceOf(p, b.address), '20', 'b got its 7 back');
    assert.equal(await balanceOf(p, a.address), '15', 'a was not touched');

    const again = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, user_address: b.address, token_amount: '' });
    assert.notEqual(again.common.res_code, '00', 'b\'s payment is already fully refunded');
    const refundA = await unary(p.client, 'CancelPayment', store.apiKey, { ...base, user_address: a.address, token_amount: '' });
    assert.equal(refundA.common.res_code, '00', JSON.stringify(refundA.common));
    assert.equal(await balanceOf(p, a.address), '20');
    assert.equal(parseUnits(await balanceOf(p, store.settlementAddress), 18), before, 'the store paid back exactly what it received');
  });
});
