import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseUnits, toHex, type Address, type Hex, type LocalAccount } from 'viem';
import { randomBytes } from 'node:crypto';
import { wrapFetchWithPaymentFromConfig as wrapFetch210 } from 'x402-fetch-2-10';
import { ExactEvmScheme as ExactEvmClientScheme210 } from 'x402-evm-2-10/exact/client';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { listeningFacilitator, type PaidResource, payingFetch, startPaidResource, vixpBalanceOf } from './support/x402-resource.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { waitFor } from './support/wait-for.ts';

// Clients in the field (issue 30): `@x402/fetch` and `@x402/evm` 2.10.0, like the Go and Python SDKs,
// sign `validAfter = now − 600`; 2.27.0 signs 0. Both pay a resource server built with
// `@x402/express` through the platform, and their payments share one settlement transaction (the
// settlement contract carries any validAfter, contracts/VixpSettlement.sol).

let t: TestPlatform;
let resource: PaidResource;
let network: `eip155:${number}`;
let vixp: Address;
let facilitatorUrl: string;
let apiKey: string;
const price = parseUnits('1', 18);
const payee = privateKeyToAccount(generatePrivateKey()).address;

const vixpBalance = (address: Address) => vixpBalanceOf(t.platform, address);

/** `fetch` that pays with the published 2.10.0 client (`x402-fetch-2-10`, `x402-evm-2-10`: npm aliases of `@x402/fetch`, `@x402/evm` 2.10.0). */
function payingFetch210(account: LocalAccount, sent: string[]): typeof fetch {
  const recording: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const header = request.headers.get('payment-signature');
    if (header) sent.push(header);
    return fetch(request);
  };
  return wrapFetch210(recording, { schemes: [{ network: 'eip155:*', client: new ExactEvmClientScheme210(account) }] });
}

const signedAuthorization = (header: string) =>
  (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { payload: { authorization: { validAfter: string; validBefore: string } } }).payload.authorization;

before(async () => {
  // Batches stay open 3 s after their first transfer, so two buyers paying at once share one.
  t = await startTestPlatform({ env: { SETTLEMENT_BATCH_WINDOW_MS: '3000' } });
  ({ facilitatorUrl, apiKey, network, vixp } = await listeningFacilitator(t, { name: 'clients test', tid: 'T-X402-CLIENTS' }));
  resource = await startPaidResource({ facilitatorUrl, apiKey, network, asset: vixp, amount: price.toString(), payTo: payee });
});
after(async () => {
  await resource?.close();
  await t?.stop();
});

test('a 2.10.0 buyer (validAfter now − 600) and a 2.27.0 buyer pay at once: both served, each charged once, one settlement transaction carries both', async () => {
  const [old, current] = [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())];
  for (const buyer of [old, current]) await t.platform.wallet.mint('ethereum', { to: buyer.address, amount: '10' });
  const oldSent: string[] = [];
  const currentSent: string[] = [];
  const now = BigInt(Math.floor(Date.now() / 1000));
  const responses = await Promise.all([
    payingFetch210(old, oldSent)(resource.url),
    payingFetch(current, { network, asset: vixp }, currentSent)(resource.url),
  ]);
  assert.deepEqual(await Promise.all(responses.map(async (r) => [r.status, (await r.json() as { weather?: string }).weather])), [[200, 'sunny'], [200, 'sunny']]);

  // What each client signed: 2.10.0 about ten minutes back, 2.27.0 from 0.
  const oldSigned = BigInt(signedAuthorization(oldSent[0]!).validAfter);
  assert.ok(oldSigned > 0n && oldSigned <= now - 590n && oldSigned >= now - 700n, `2.10.0 signed validAfter ${oldSigned}, now ${now}`);
  const currentSigned = BigInt(signedAuthorization(currentSent[0]!).validAfter);

  const rows = await t.platform.store.db.selectFrom('x402_settlements').select(['payer', 'status', 'tx_hash', 'valid_after'])
    .where('payer', 'in', [old.address, current.address]).orderBy('payer').execute();
  assert.equal(rows.length, 2);
  for (const row of rows) assert.equal(row.status, 'settled');
  assert.deepEqual(Object.fromEntries(rows.map((r) => [r.payer, r.valid_after])), { [old.address]: oldSigned.toString(), [current.address]: currentSigned.toString() }, 'stored as signed');
  assert.equal(rows[0]!.tx_hash, rows[1]!.tx_hash, 'one settlement transaction carried both');
  const receipt = await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: rows[0]!.tx_hash as `0x${string}` });
  assert.equal(receipt.to?.toLowerCase(), t.platform.contracts.ethereum.settlement.toLowerCase(), 'through the settlement contract');

  assert.equal(await vixpBalance(payee), 2n * price);
  for (const buyer of [old, current]) assert.equal(await vixpBalance(buyer.address), parseUnits('9', 18), 'charged once');
});

test('a validAfter a few seconds ahead (beyond the batch window) is accepted and held until it is due, then settled once (not refused)', async () => {
  const buyer = privateKeyToAccount(generatePrivateKey());
  await t.platform.wallet.mint('ethereum', { to: buyer.address, amount: '10' });
  const { chainId } = t.platform.chains.ethereum;
  const now = BigInt(Math.floor(Date.now() / 1000));
  const message = { from: buyer.address, to: payee, value: price, validAfter: now + 6n, validBefore: now + 600n, nonce: toHex(randomBytes(32)) as Hex };
  const signature = await buyer.signTypedData({
    domain: { name: 'VIXP', version: '1', chainId, verifyingContract: vixp }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message,
  });
  const requirements = { scheme: 'exact', network, asset: vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 600, extra: { name: 'VIXP', version: '1' } };
  const authorization = Object.fromEntries(Object.entries(message).map(([k, v]) => [k, String(v)]));
  const body = { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization, signature }, resource: { url: 'http://example.test/weather', description: '', mimeType: '' } }, paymentRequirements: requirements };
  const post = async (path: string) => {
    const response = await fetch(`${facilitatorUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify(body) });
    return await response.json() as { isValid?: boolean; invalidReason?: string; success?: boolean; errorReason?: string; transaction?: string };
  };
  const verified = await post('/verify');
  assert.deepEqual([verified.isValid, verified.invalidReason], [true, undefined], JSON.stringify(verified));
  const settled = await waitFor(async () => { const answer = await post('/settle'); return answer.success ? answer : undefined; }, { timeoutMs: 60_000, message: 'settled once due' });
  const receipt = await t.platform.chains.ethereum.client.getTransactionReceipt({ hash: settled.transaction as Hex });
  const block = await t.platform.chains.ethereum.client.getBlock({ blockNumber: receipt.blockNumber });
  assert.ok(block.timestamp > message.validAfter, `mined at ${block.timestamp}, validAfter ${message.validAfter}`);
  assert.equal(await vixpBalance(buyer.address), parseUnits('9', 18), 'charged once');
  const reverted = await t.platform.store.db.selectFrom('chain_txs').select('status').where('status', '=', 'failed').execute();
  assert.equal(reverted.length, 0, 'no transaction sent before it was due');
});
