import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { fundedPayer, listeningFacilitator, type PaidResource, payingFetch, startPaidResource, vixpBalanceOf } from './support/x402-resource.ts';

// The `exact` scheme's Permit2 form (docs/x402.md#permit2) is not settled by the platform: a buyer whose
// published client (@x402/fetch, @x402/evm 2.27.0) signs it, because the resource server asks for
// `assetTransferMethod: "permit2"`, is refused with `unsupported_payload_type`, not served and not charged.

let t: TestPlatform;
let resource: PaidResource;
let network: `eip155:${number}`;
let vixp: Address;
let facilitatorUrl: string;
let apiKey: string;
const price = parseUnits('1', 18);
const payee = privateKeyToAccount(generatePrivateKey()).address;

before(async () => {
  t = await startTestPlatform();
  ({ facilitatorUrl, apiKey, network, vixp } = await listeningFacilitator(t, { name: 'permit2 test', tid: 'T-X402-PERMIT2' }));
  resource = await startPaidResource({ facilitatorUrl, apiKey, network, asset: vixp, amount: price.toString(), payTo: payee, extra: { assetTransferMethod: 'permit2' } });
});
after(async () => {
  await resource?.close();
  await t?.stop();
});

test('a buyer signing the Permit2 form is refused unsupported_payload_type on verify and settle: not served, nothing moves, nothing recorded', async () => {
  const buyer = await fundedPayer(t.platform, '10');
  const sent: string[] = [];
  const response = await payingFetch(buyer, { network, asset: vixp }, sent)(resource.url);
  assert.equal(response.status, 402);
  assert.equal(resource.served, 0, 'not served');
  assert.equal(sent.length, 1, 'the client paid once');

  const paymentPayload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString('utf8')) as { accepted: unknown; payload: Record<string, unknown> };
  assert.ok('permit2Authorization' in paymentPayload.payload, 'the published client signed the Permit2 form');
  const post = async (path: string) => {
    const answer = await fetch(`${facilitatorUrl}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: paymentPayload.accepted }),
    });
    return await answer.json() as { isValid?: boolean; invalidReason?: string; success?: boolean; errorReason?: string; payer?: string };
  };
  const verified = await post('/verify');
  assert.deepEqual([verified.isValid, verified.invalidReason, verified.payer], [false, 'unsupported_payload_type', buyer.address], JSON.stringify(verified));
  const settled = await post('/settle');
  assert.deepEqual([settled.success, settled.errorReason, settled.payer], [false, 'unsupported_payload_type', buyer.address], JSON.stringify(settled));

  assert.equal(await vixpBalanceOf(t.platform, buyer.address), parseUnits('10', 18), 'not charged');
  assert.equal(await vixpBalanceOf(t.platform, payee), 0n);
  const rows = await t.platform.store.db.selectFrom('x402_settlements').select('status').where('payer', '=', buyer.address).execute();
  assert.equal(rows.length, 0, 'nothing recorded');
});
