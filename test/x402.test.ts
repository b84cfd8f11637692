import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseUnits, type Address } from 'viem';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { fundedPayer, payingFetch, startPaidResource, vixpBalanceOf, type PaidResource } from './support/x402-resource.ts';
import { addFacilitatorKey, revokeFacilitatorKey } from '../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../src/store/facilitator-key-repository.ts';
import { Resolver } from 'did-resolver';
import { getResolver } from 'ethr-did-resolver';
import { verifyReceipt } from '../src/receipts/verify-receipt.ts';
import { isNetworkName } from '../src/shared/networks.ts';
import { consoleFigures } from '../src/console/console-figures.ts';
import { authorizationKey } from '../src/chain/mined-receipt.ts';
import { waitFor } from './support/wait-for.ts';

let t: TestPlatform;
let facilitatorUrl: string;
let apiKey: string;
let resource: PaidResource;
let network: `eip155:${number}`;
let vixp: Address;
const price = parseUnits('1', 18);
const payee = privateKeyToAccount(generatePrivateKey()).address;

const vixpBalance = (address: Address) => vixpBalanceOf(t.platform, address);
const chainTxCount = async () => Number((await t.platform.store.db.selectFrom('chain_txs').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);

const fundedAccount = (amount = '10') => fundedPayer(t.platform, amount);

async function facilitator(path: string, body?: unknown, key: string | null = apiKey) {
  const response = await fetch(`${facilitatorUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() as any };
}

function requirements(overrides: Partial<PaymentRequirements> = {}): PaymentRequirements {
  return {
    scheme: 'exact', network, asset: vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 120,
    extra: { name: 'VIXP', version: '1' }, ...overrides,
  };
}

/** A settlement's id (its receipt's source): its network, token, payer and nonce. */
const settlementId = (payer: string, nonce: string) => authorizationKey('ethereum', vixp, payer, nonce);

/** What the published client signs for `signed`, presented against `checked`. */
async function signedPayment(account: ReturnType<typeof privateKeyToAccount>, signed: PaymentRequirements, checked = signed) {
  const { payload } = await new ExactEvmClientScheme(account).createPaymentPayload(2, signed);
  const paymentPayload: PaymentPayload = { x402Version: 2, accepted: signed, payload, resource: { url: 'http://example.test/weather', description: '', mimeType: '' } };
  return { x402Version: 2, paymentPayload, paymentRequirements: checked };
}

before(async () => {
  // Batches close 200 ms after their first transfer, as on a chain that mines a block every few seconds (docs/performance.md): the automining default (3 ms) would send most payments alone.
  t = await startTestPlatform({ env: { SETTLEMENT_BATCH_WINDOW_MS: '200' } });
  facilitatorUrl = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/x402`;
  const key = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, { name: 'test resource server', tid: 'T-X402', ratePerSecond: 1000 });
  apiKey = key.key;
  network = `eip155:${t.platform.chains.ethereum.chainId}`;
  vixp = t.platform.contracts.ethereum.vixpToken;
  resource = await startPaidResource({ facilitatorUrl, apiKey, network, asset: vixp, amount: price.toString(), payTo: payee });
});
after(async () => {
  await resource?.close();
  await t?.stop();
});

describe('x402 facilitator', () => {
  test('GET /x402/supported lists exact on every network with VIXP and its EIP-712 domain, without a key', async () => {
    const { status, body } = await facilitator('/supported', undefined, null);
    assert.equal(status, 200);
    const kind = body.kinds.find((k: any) => k.network === network);
    assert.deepEqual({ x402Version: kind.x402Version, scheme: kind.scheme }, { x402Version: 2, scheme: 'exact' });
    assert.deepEqual(kind.extra.assets[0], { address: vixp, symbol: 'VIXP', decimals: 18, name: 'VIXP', version: '1' });
    assert.equal(body.kinds.length, 4);
    assert.deepEqual(body.signers['eip155:*'], t.platform.relayer.lanes);
  });

  test('verify and settle need a facilitator key; a revoked key is refused', async () => {
    const payment = await signedPayment(await fundedAccount('1'), requirements());
    assert.equal((await facilitator('/verify', payment, null)).status, 401);
    assert.equal((await facilitator('/settle', payment, 'vxf_not-a-key')).status, 401);
    const other = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, { name: 'revoked' });
    assert.equal((await facilitator('/verify', payment, other.key)).status, 200);
    await revokeFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, other.id);
    assert.equal((await facilitator('/verify', payment, other.key)).status, 401);
    // A key's rate: 1 request per second is a burst of 10, then 429, refilled by one each second. 20
    // sent together: the burst is served and the rest refused, but for those the seconds between the
    // first and the last arrival refilled (on a loaded CI machine, one or two); the exact burst and
    // refill are src/x402/key-rate-limit.test.ts's, on an injected clock.
    const slow = await addFacilitatorKey({ keys: createFacilitatorKeyRepository(t.platform.store.db), clock: Date.now }, { name: 'slow', ratePerSecond: 1 });
    const started = Date.now();
    const statuses = await Promise.all(Array.from({ length: 20 }, () => facilitator('/verify', payment, slow.key).then((r) => r.status)));
    const refilled = Math.ceil((Date.now() - started) / 1000);
    const served = statuses.filter((status) => status === 200).length;
    assert.deepEqual(statuses.filter((status) => status !== 200 && status !== 429), [], 'each served or refused for its rate');
    assert.ok(served >= 10 && served <= Math.min(19, 10 + refilled), `${served} of 20 served within ${refilled} s at 1 request/s and a burst of 10`);
  });

  test('a client of @x402/fetch gets 402, pays through the platform, gets 200; the payee is paid once; the header replayed is refused', async () => {
    const payer = await fundedAccount('5');
    const before = await vixpBalance(payee);
    const unpaid = await fetch(resource.url);
    assert.equal(unpaid.status, 402);
    const sent: string[] = [];
    const response = await payingFetch(payer, { network, asset: vixp }, sent)(resource.url);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { weather: 'sunny', temperature: 21 });
    assert.ok(response.headers.get('payment-response'), 'the settlement is answered in PAYMENT-RESPONSE');
    assert.equal(await vixpBalance(payee), before + price);
    assert.equal(await vixpBalance(payer.address), parseUnits('4', 18));
    assert.equal(sent.length, 1);

    // The same PAYMENT-SIGNATURE again: refused (402), nothing moves.
    const txs = await chainTxCount();
    const replayed = await fetch(resource.url, { headers: { 'payment-signature': sent[0]! } });
    assert.equal(replayed.status, 402);
    assert.equal(await vixpBalance(payee), before + price);
    assert.equal(await chainTxCount(), txs);

    // /settle of that payment again answers the first transaction, and moves nothing.
    const paymentPayload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString()) as PaymentPayload;
    const settled = await t.platform.store.db.selectFrom('x402_settlements').selectAll()
      .where('payer', '=', payer.address).executeTakeFirstOrThrow();
    const again = await facilitator('/settle', { x402Version: 2, paymentPayload, paymentRequirements: paymentPayload.accepted });
    assert.equal(again.status, 200);
    assert.deepEqual(again.body, { success: true, payer: payer.address, transaction: settled.tx_hash, network, amount: price.toString() });
    assert.equal(await vixpBalance(payee), before + price);
    assert.equal(await chainTxCount(), txs);
    const status = await facilitator(`/settlements/${payer.address}/${settled.nonce}`);
    assert.deepEqual(status.body, { status: 'settled', payer: payer.address, nonce: settled.nonce, network, transaction: settled.tx_hash });
    // One x402.settled event for the key's store, written with the outcome, whatever was retried.
    const events = (await t.platform.store.db.selectFrom('webhook_events').selectAll().where('tid', '=', 'T-X402').execute())
      .filter((e) => JSON.parse(e.data).nonce === settled.nonce);
    assert.deepEqual(events.map((e) => [e.type, JSON.parse(e.data).transaction, JSON.parse(e.data).amount]), [['x402.settled', settled.tx_hash, price.toString()]]);
    // Its verifiable receipt: issued by the platform's system issuer, checked against the chain.
    const receipt = await facilitator(`/settlements/${payer.address}/${settled.nonce}/receipt`);
    assert.equal(receipt.status, 200);
    const subject = receipt.body.receipts[0].credentialSubject;
    assert.deepEqual([subject.kind, subject.tid, subject.nonce, subject.amount, subject.token, subject.from, subject.to, subject.transactionId],
      ['x402', 'T-X402', settled.nonce, '1', 'VIXP', payer.address, payee, settled.tx_hash]);
    const { ethereum } = t.platform.chains;
    const verified = await verifyReceipt({
      resolver: new Resolver(getResolver({ networks: [{ name: 'mainnet', chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: t.platform.contracts.ethereum.didRegistry }] })) as never,
      systemIssuers: t.platform.did.systemDids.issuer.map((d) => d.did),
      chainOf: (name) => (isNetworkName(name) ? t.platform.chains[name] : undefined),
    }, receipt.body.receipts[0]);
    assert.equal(verified.verified, true, JSON.stringify(verified.checks));
    assert.equal((await facilitator(`/settlements/${payer.address}/0x${'00'.repeat(32)}/receipt`)).status, 404);
    const metrics = await t.platform.metrics.registry.getSingleMetricAsString('vixpay_x402_settlements_total');
    assert.match(metrics, /vixpay_x402_settlements_total\{network="ethereum",outcome="settled"\} [1-9]/);
  });

  test('lookups and receipts belong to the key (or its store) that settled: another store\'s key and a key of no store get 404; the receipt is issued at settlement, before any read', async () => {
    const keys = createFacilitatorKeyRepository(t.platform.store.db);
    const sameStore = await addFacilitatorKey({ keys, clock: Date.now }, { name: 'the store\'s second server', tid: 'T-X402', ratePerSecond: 1000 });
    const otherStore = await addFacilitatorKey({ keys, clock: Date.now }, { name: 'another store', tid: 'T-OTHER', ratePerSecond: 1000 });
    const noStore = await addFacilitatorKey({ keys, clock: Date.now }, { name: 'no store', ratePerSecond: 1000 });
    const payer = await fundedAccount('2');
    const payment = await signedPayment(payer, requirements());
    const nonce = (payment.paymentPayload.payload as any).authorization.nonce as string;
    const settled = await facilitator('/settle', payment);
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
    // Kept when the settle answered, before anyone read it.
    const issued = await t.platform.store.db.selectFrom('receipts').selectAll().where('kind', '=', 'x402').where('source_id', '=', settlementId(payer.address, nonce)).execute();
    assert.deepEqual(issued.map((r) => [r.tid, r.transaction_id]), [['T-X402', settled.body.transaction]]);
    for (const [name, key] of [['another store\'s key', otherStore.key], ['a key of no store', noStore.key]]) {
      assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}`, undefined, key)).status, 404, name);
      assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}/receipt`, undefined, key)).status, 404, name);
    }
    // Another key of the same store reads both; the receipt is the one issued at settlement.
    assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}`, undefined, sameStore.key)).body.status, 'settled');
    const receipt = await facilitator(`/settlements/${payer.address}/${nonce}/receipt`, undefined, sameStore.key);
    assert.equal(receipt.status, 200);
    assert.equal(receipt.body.receipts[0].proof.jwt, issued[0]!.credential_jwt);
    assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}/receipt`)).body.receipts[0].proof.jwt, issued[0]!.credential_jwt);
    // The payer's own list includes it.
    const listed = await t.platform.receipts.userReceipts(payer.address, 10);
    assert.deepEqual(listed.map((r: any) => [r.credentialSubject.kind, r.credentialSubject.nonce, r.proof.jwt]), [['x402', nonce, issued[0]!.credential_jwt]]);
  });

  test('a settlement the recovery sweep records settled (a crash before its outcome was recorded) gets its receipt then; a receipt lost after the record is issued by the next sweep', async () => {
    const { db } = t.platform.store;
    const payer = await fundedAccount('2');
    const payment = await signedPayment(payer, requirements());
    const nonce = (payment.paymentPayload.payload as any).authorization.nonce as string;
    const settled = await facilitator('/settle', payment);
    assert.equal(settled.body.success, true, JSON.stringify(settled.body));
    const receiptOf = () => db.selectFrom('receipts').selectAll().where('kind', '=', 'x402').where('source_id', '=', settlementId(payer.address, nonce)).executeTakeFirst();
    // As after a kill -9 between the chain's outcome and its record: accepted, no event, no receipt; nobody asks again.
    await db.deleteFrom('receipts').where('kind', '=', 'x402').where('source_id', '=', settlementId(payer.address, nonce)).execute();
    const events = (await db.selectFrom('webhook_events').select(['id', 'data']).where('tid', '=', 'T-X402').execute()).filter((e) => JSON.parse(e.data).nonce === nonce);
    await db.deleteFrom('webhook_events').where('id', 'in', events.map((e) => e.id)).execute();
    const aMinuteAgo = Date.now() - 60_000;
    await db.updateTable('x402_settlements').set({ status: 'accepted', tx_hash: null, created_at: aMinuteAgo, updated_at: aMinuteAgo }).where('nonce', '=', nonce).execute();
    const swept = await waitFor(receiptOf, { timeoutMs: 30_000, message: 'the sweep records the settlement and issues its receipt' });
    const row = await db.selectFrom('x402_settlements').selectAll().where('nonce', '=', nonce).executeTakeFirstOrThrow();
    assert.deepEqual([row.status, row.tx_hash, swept.transaction_id], ['settled', settled.body.transaction, settled.body.transaction]);
    // Recorded settled, its receipt lost (a crash right after the record): the next sweep issues it.
    await db.deleteFrom('receipts').where('kind', '=', 'x402').where('source_id', '=', settlementId(payer.address, nonce)).execute();
    const again = await waitFor(receiptOf, { timeoutMs: 30_000, message: 'the sweep issues the missing receipt' });
    assert.equal(again.transaction_id, settled.body.transaction);
    assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}/receipt`)).body.receipts[0].proof.jwt, again.credential_jwt);
  });

  test('50 payers at once: all 200, each charged once, in a few settlement transactions', async () => {
    const payers = await Promise.all(Array.from({ length: 50 }, () => fundedAccount('3')));
    const before = await vixpBalance(payee);
    const txs = await chainTxCount();
    const responses = await Promise.all(payers.map((payer) => payingFetch(payer, { network, asset: vixp })(resource.url)));
    assert.deepEqual(responses.map((r) => r.status), payers.map(() => 200));
    assert.equal(await vixpBalance(payee), before + 50n * price);
    for (const payer of payers) assert.equal(await vixpBalance(payer.address), parseUnits('2', 18));
    const rows = await t.platform.store.db.selectFrom('x402_settlements').select('tx_hash')
      .where('payer', 'in', payers.map((p) => p.address)).execute();
    const transactions = new Set(rows.map((r) => r.tx_hash));
    const sent = (await chainTxCount()) - txs;
    console.log(`50 x402 payments: ${transactions.size} settlement transactions (${(50 / transactions.size).toFixed(1)} transfers per transaction), ${sent} transactions sent`);
    assert.equal(rows.length, 50);
    assert.ok(transactions.size < 50, `batched: ${transactions.size} transactions`);
    assert.equal(sent, transactions.size);
    // The console counts them apart from POS payments (none here).
    const figures = await consoleFigures(t.platform.console.figures, 1);
    assert.equal(figures.payments.total, 0);
    assert.ok(figures.x402.settled >= 51, `x402 settled ${figures.x402.settled}`);
    assert.equal(figures.x402.settledAmounts[0]?.token, 'VIXP');
    // Today's card counts them too, and the console's Latest and Search list them as x402 rows.
    assert.ok(figures.days.today.x402.settled >= 50, `x402 settled today ${figures.days.today.x402.settled}`);
    const { repository } = t.platform.console.figures;
    const latest = await repository.recentActivity(20);
    assert.ok(latest.some((row) => row.kind === 'x402' && payers.some((p) => p.address === row.userAddress)), 'x402 payments among the latest');
    const [first] = payers as [typeof payers[number]];
    const found = await repository.search(first.address, 10);
    assert.equal(found.length, 1);
    assert.deepEqual([found[0]!.kind, found[0]!.status, found[0]!.userAddress], ['x402', 'settled', first.address]);
    assert.deepEqual((await repository.search(found[0]!.reference, 10)).map((row) => row.reference), [found[0]!.reference], 'by payer/nonce');
    // The operator's day tells x402 settlements from POS ones.
    const day = await t.platform.statements.operatorDay(figures.days.today.date);
    const ours = day.transactions.filter((tx) => transactions.has(tx.txHash));
    assert.deepEqual([...new Set(ours.map((tx) => tx.kind))], ['x402-settlement']);
    assert.ok(day.networks.find((n) => n.network === 'ethereum')!.x402Transfers >= 50);
  });

  test('the same authorization settled by five callers at once: one transfer, every caller answered its transaction', async () => {
    const payer = await fundedAccount('3');
    const payment = await signedPayment(payer, requirements());
    const before = await vixpBalance(payee);
    const answers = await Promise.all(Array.from({ length: 5 }, () => facilitator('/settle', payment)));
    const transactions = new Set(answers.map((a) => a.body.transaction));
    assert.deepEqual(answers.map((a) => [a.status, a.body.success]), answers.map(() => [200, true]));
    assert.equal(transactions.size, 1);
    assert.equal(await vixpBalance(payee), before + price);
    assert.equal(await vixpBalance(payer.address), parseUnits('2', 18));
    // Presented against another resource's requirements, the settled authorization is not that resource's payment.
    const elsewhere = await facilitator('/settle', { ...payment, paymentRequirements: requirements({ payTo: payer.address }) });
    assert.deepEqual([elsewhere.body.success, elsewhere.body.errorReason], [false, 'invalid_exact_evm_recipient_mismatch']);
    const dearer = await facilitator('/settle', { ...payment, paymentRequirements: requirements({ amount: (2n * price).toString() }) });
    assert.deepEqual([dearer.body.success, dearer.body.errorReason], [false, 'invalid_exact_evm_payload_authorization_value_mismatch']);
  });

  test('refused at verify with the reason, and no transaction: wrong amount, wrong payTo, expired, a token not allowed, no balance', async () => {
    const payer = await fundedAccount('5');
    const broke = privateKeyToAccount(generatePrivateKey());
    const txs = await chainTxCount();
    const cases: Array<[string, Awaited<ReturnType<typeof signedPayment>>, string]> = [
      ['wrong amount', await signedPayment(payer, requirements({ amount: '1' }), requirements()), 'invalid_exact_evm_payload_authorization_value_mismatch'],
      ['wrong payTo', await signedPayment(payer, requirements({ payTo: payer.address }), requirements()), 'invalid_exact_evm_recipient_mismatch'],
      ['expired', await signedPayment(payer, requirements({ maxTimeoutSeconds: 1 })), 'invalid_exact_evm_payload_authorization_valid_before'],
      ['token not allowed', await signedPayment(payer, requirements({ asset: t.platform.contracts.ethereum.settlement })), 'invalid_payment_requirements'],
      ['no balance', await signedPayment(broke, requirements()), 'insufficient_funds'],
    ];
    for (const [name, payment, reason] of cases) {
      const verified = await facilitator('/verify', payment);
      assert.equal(verified.status, 200, name);
      assert.equal(verified.body.isValid, false, name);
      assert.equal(verified.body.invalidReason, reason, name);
      const settled = await facilitator('/settle', payment);
      assert.deepEqual([settled.body.success, settled.body.errorReason, settled.body.transaction], [false, reason, ''], name);
    }
    assert.equal(await chainTxCount(), txs);
    assert.equal(await vixpBalance(payer.address), parseUnits('5', 18));
  });

  test('a settle unmined within the caller\'s budget answers pending with its transaction; what it holds refuses a second payment insufficient_funds; the status lookup answers it once mined', async () => {
    const payer = await fundedAccount('1');
    const first = await signedPayment(payer, requirements());
    const second = await signedPayment(payer, requirements());
    const { client } = t.platform.chains.ethereum;
    await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    try {
      const response = await fetch(`${facilitatorUrl}/settle`, {
        method: 'POST', body: JSON.stringify(first),
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, prefer: 'wait=1' },
      });
      const pending = await response.json() as any;
      assert.equal(response.status, 202);
      assert.equal(pending.success, false);
      assert.equal(pending.errorReason, 'settlement_pending');
      assert.match(pending.transaction, /^0x[0-9a-f]{64}$/);
      // On chain the payer still has the whole balance; the authorization in flight holds it.
      const verified = await facilitator('/verify', second);
      assert.deepEqual([verified.body.isValid, verified.body.invalidReason], [false, 'insufficient_funds']);
      const nonce = (first.paymentPayload.payload as any).authorization.nonce;
      assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}`)).body.status, 'pending');
      await client.request({ method: 'evm_setAutomine' as never, params: [true] as never });
      await client.request({ method: 'evm_mine' as never });
      const settled = await facilitator('/settle', first);
      assert.deepEqual([settled.body.success, settled.body.transaction], [true, pending.transaction]);
      assert.equal((await facilitator(`/settlements/${payer.address}/${nonce}`)).body.status, 'settled');
      assert.equal(await vixpBalance(payer.address), 0n);
    } finally {
      await client.request({ method: 'evm_setAutomine' as never, params: [true] as never });
    }
  });
});

