import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseUnits, type Address, type Hex, type LocalAccount } from 'viem';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment, x402Client, decodePaymentResponseHeader } from '@x402/fetch';
import { appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension, generatePaymentId, PAYMENT_IDENTIFIER } from '@x402/extensions/payment-identifier';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { AnvilProcess } from '../src/chain/anvil-process.ts';
import { startExternalNode } from './support/external-node.ts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { fundedPayer, listeningFacilitator, type PaidResource, payingFetch, startPaidResource, vixpBalanceOf } from './support/x402-resource.ts';
import { waitFor } from './support/wait-for.ts';

// Issue 30: a resource server built with `@x402/express` 2.27.0 on a chain that mines a block every
// 2 s (anvil's interval mining), and the payment-identifier extension of `@x402/extensions` 2.27.0.
// `@x402/core`'s facilitator client reads our 202 `settlement_pending` as a settle answer (any 2xx is),
// asks once more when it names a transaction, and the middleware then answers the buyer 402 with
// that answer in PAYMENT-RESPONSE, dropping the handler's answer: the buyer is served only after the
// settlement, or told to send the same payment again, which is served once it is mined, once.
let node: AnvilProcess;
let t: TestPlatform;
let facilitatorUrl: string;
let apiKey: string;
let network: `eip155:${number}`;
let vixp: Address;
/** Waits for the chain (the facilitator's 30 s) before answering. */
let patient: PaidResource;
/** Asks the facilitator not to wait (`Prefer: wait=0`): every settle of an unmined payment answers pending. */
let impatient: PaidResource;
/** Declares the payment-identifier extension. */
let withIds: PaidResource;
const price = parseUnits('1', 18);
const payee = privateKeyToAccount(generatePrivateKey()).address;

const balanceOf = (address: Address) => vixpBalanceOf(t.platform, address);
const settlementsOf = (payer: Address) => t.platform.store.db.selectFrom('x402_settlements').selectAll().where('payer', '=', payer).execute();

const fundedAccount = (amount = '5') => fundedPayer(t.platform, amount);

async function facilitator(path: string, body?: unknown) {
  const response = await fetch(`${facilitatorUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() as any };
}

/** A settle body as a resource server sends it: the published client's payment with the payment-identifier id `id`. */
async function paymentWithId(account: LocalAccount, id: string) {
  const requirements: PaymentRequirements = {
    scheme: 'exact', network, asset: vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' },
  };
  const { payload } = await new ExactEvmClientScheme(account).createPaymentPayload(2, requirements);
  const extensions: Record<string, unknown> = { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() };
  appendPaymentIdentifierToExtensions(extensions, id);
  const paymentPayload: PaymentPayload = {
    x402Version: 2, accepted: requirements, payload, extensions, resource: { url: 'http://example.test/weather', description: '', mimeType: '' },
  };
  return { x402Version: 2, paymentPayload, paymentRequirements: requirements };
}

before(async () => {
  let relayerKey: Hex;
  ({ node, relayerKey } = await startExternalNode({ blockSeconds: 2 }));
  t = await startTestPlatform({ env: { RPC_URL_ETHEREUM: node.url, CHAIN_ID_ETHEREUM: '31337', RELAYER_PRIVATE_KEY: relayerKey, SETTLEMENT_BLOCK_MARGIN_MS: '300' } });
  ({ facilitatorUrl, apiKey, network, vixp } = await listeningFacilitator(t, { name: 'pending test', tid: 'T-X402-PENDING' }));
  const common = { facilitatorUrl, apiKey, network, asset: vixp, amount: price.toString(), payTo: payee };
  patient = await startPaidResource(common);
  impatient = await startPaidResource({ ...common, settleHeaders: { Prefer: 'wait=0' } });
  withIds = await startPaidResource({ ...common, extensions: { [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension() } });
});
after(async () => {
  await Promise.all([patient, impatient, withIds].map((r) => r?.close()));
  await t?.stop();
  await node?.stop();
});

describe('x402 on a chain mining every 2 s, through @x402/express', () => {
  test('a buyer is served once, after the settlement is mined, and charged once', async () => {
    const buyer = await fundedAccount();
    const paidBefore = await balanceOf(payee);
    const sent: string[] = [];
    const response = await payingFetch(buyer, { network, asset: vixp }, sent)(patient.url);
    assert.equal(response.status, 200);
    assert.deepEqual(await response.json(), { weather: 'sunny', temperature: 21 });
    const settled = decodePaymentResponseHeader(response.headers.get('payment-response')!);
    assert.equal(settled.success, true);
    // Answered after its block: the transaction is mined, the payee paid, by then.
    const receipt = await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: settled.transaction as Hex });
    assert.equal(receipt.status, 'success');
    assert.equal(await balanceOf(payee), paidBefore + price);
    assert.equal(await balanceOf(buyer.address), parseUnits('4', 18));
    assert.equal(sent.length, 1);
    assert.equal(patient.served, 1);
  });

  test('a settle answered pending is 402 with settlement_pending; the same payment sent again is served once it is mined, once; it is charged once', async () => {
    const buyer = await fundedAccount();
    const paidBefore = await balanceOf(payee);
    const sent: string[] = [];
    const first = await payingFetch(buyer, { network, asset: vixp }, sent)(impatient.url);
    // Not served: the handler ran, its answer was dropped; the buyer is told the settlement is pending.
    assert.equal(first.status, 402);
    assert.doesNotMatch(await first.text(), /sunny/);
    const pending = decodePaymentResponseHeader(first.headers.get('payment-response')!);
    assert.deepEqual({ success: pending.success, errorReason: pending.errorReason }, { success: false, errorReason: 'settlement_pending' });
    assert.equal(sent.length, 1);

    // Sent again (the same PAYMENT-SIGNATURE) until served: each attempt before the block is 402
    // pending and moves nothing; the one after it is served.
    let served: Response | undefined;
    await waitFor(async () => {
      const again = await fetch(impatient.url, { headers: { 'payment-signature': sent[0]! } });
      if (again.status === 200) served = again;
      else {
        const answer = again.headers.get('payment-response');
        assert.ok(answer, `the payment sent again is refused (${again.status}, no PAYMENT-RESPONSE) while its settlement is pending`);
        assert.equal(decodePaymentResponseHeader(answer).errorReason, 'settlement_pending');
      }
      return again.status === 200;
    }, { timeoutMs: 60_000, intervalMs: 500, message: 'the payment sent again is served once mined' });
    assert.deepEqual(await served!.json(), { weather: 'sunny', temperature: 21 });
    const settled = decodePaymentResponseHeader(served!.headers.get('payment-response')!);
    assert.equal(settled.success, true);
    assert.equal((await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: settled.transaction as Hex })).status, 'success');

    // Served once: the same payment a third time is refused, and nothing moves.
    const replayed = await fetch(impatient.url, { headers: { 'payment-signature': sent[0]! } });
    assert.equal(replayed.status, 402);
    assert.equal(await balanceOf(payee), paidBefore + price);
    assert.equal(await balanceOf(buyer.address), parseUnits('4', 18));
    assert.equal((await settlementsOf(buyer.address)).length, 1);
  });
});

describe('the payment-identifier extension (@x402/extensions 2.27.0)', () => {
  test('GET /x402/supported lists it in extensions', async () => {
    const { body } = await facilitator('/supported');
    assert.deepEqual(body.extensions, ['payment-identifier']);
  });

  test('settle: the same id with the same payment answers the stored result; the same id with another payment is 409 and moves nothing', async () => {
    const buyer = await fundedAccount();
    const id = generatePaymentId();
    const payment = await paymentWithId(buyer, id);
    const first = await facilitator('/settle', payment);
    assert.equal(first.status, 200);
    assert.equal(first.body.success, true);
    const again = await facilitator('/settle', payment);
    assert.deepEqual(again, first);

    const other = await paymentWithId(buyer, id);
    const verified = await facilitator('/verify', other);
    assert.equal(verified.status, 409);
    assert.equal(verified.body.invalidReason, 'payment_identifier_conflict');
    const conflict = await facilitator('/settle', other);
    assert.equal(conflict.status, 409);
    assert.deepEqual({ success: conflict.body.success, errorReason: conflict.body.errorReason }, { success: false, errorReason: 'payment_identifier_conflict' });
    assert.equal((await settlementsOf(buyer.address)).length, 1);
    assert.equal(await balanceOf(buyer.address), parseUnits('4', 18));

    // An id outside the extension's format is refused with the reason, as the published validator words it.
    const invalid = await facilitator('/settle', await paymentWithId(buyer, generatePaymentId()).then((p) => {
      (p.paymentPayload.extensions![PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id = 'short';
      return p;
    }));
    assert.deepEqual({ status: invalid.status, errorReason: invalid.body.errorReason }, { status: 200, errorReason: 'invalid_payload' });
    assert.match(invalid.body.errorMessage, /payment-identifier/);
  });

  test('through @x402/express: the buyer retrying with its id and payment is served the stored result; a new payment under the same id is refused, charged nothing', async () => {
    const buyer = await fundedAccount();
    const id = generatePaymentId();
    const client = x402Client.fromConfig({
      schemes: [{ network: 'eip155:*', client: new ExactEvmClientScheme(buyer) }], spendControls: { allowedAssets: [{ network, asset: vixp }] },
    });
    client.onBeforePaymentCreation(async ({ paymentRequired }) => { appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id); });
    const sent: string[] = [];
    const pay = wrapFetchWithPayment(async (input, init) => {
      const request = new Request(input, init);
      const header = request.headers.get('payment-signature');
      if (header) sent.push(header);
      return fetch(request);
    }, client);

    const response = await pay(withIds.url);
    assert.equal(response.status, 200);
    const payload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString()) as PaymentPayload;
    assert.equal((payload.extensions?.[PAYMENT_IDENTIFIER] as { info: { id: string } }).info.id, id);
    const settled = decodePaymentResponseHeader(response.headers.get('payment-response')!);

    // The same request again (the answer was lost): served, with the same settlement.
    const repeated = await fetch(withIds.url, { headers: { 'payment-signature': sent[0]! } });
    assert.equal(repeated.status, 200);
    assert.equal(decodePaymentResponseHeader(repeated.headers.get('payment-response')!).transaction, settled.transaction);

    // A new payment under the same id (the client signs afresh): refused before the handler, nothing charged.
    const servedBefore = withIds.served;
    assert.equal((await pay(withIds.url)).status, 402);
    assert.equal(withIds.served, servedBefore);
    assert.equal((await settlementsOf(buyer.address)).length, 1);
    assert.equal(await balanceOf(buyer.address), parseUnits('4', 18));
  });
});
