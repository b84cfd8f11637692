/**
 * Every path that signs, while the HSM token is gone (KEY_CUSTODY=pkcs11, SoftHSM2; issue 41): REST
 * pay answers 503, a gRPC payment res_code 10, an x402 settle 503 (through the published
 * `@x402/express` seller and `@x402/fetch` buyer too), never a pending that claims a send; nothing is
 * accepted, sent or moved, and each goes through once the token is back, without a restart. The token
 * API's transfer is test/key-custody.test.ts's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { readdirSync, renameSync } from 'node:fs';
import path from 'node:path';
import { parseUnits, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type * as Pkcs11js from 'pkcs11js';
import { makeSoftToken, softhsmMissing, type SoftToken } from './support/softhsm.ts';
import { skipWithout } from './support/parts.ts';
import { balanceOf, newUser, openSession, startPay, startPaymentTest, transferFor, type PaymentTest } from './support/payments.ts';
import { fundedPayer, listeningFacilitator, payingFetch, startPaidResource, vixpBalanceOf, type PaidResource } from './support/x402-resource.ts';
import { addUser } from '../src/identity/add-user.ts';

const skip = skipWithout('softhsm2', softhsmMissing());

let soft: SoftToken;
let p: PaymentTest;
let shop: { tid: string; apiKey: string };
let facilitator: Awaited<ReturnType<typeof listeningFacilitator>>;
let resource: PaidResource;
const payee = privateKeyToAccount(generatePrivateKey()).address;
const price = parseUnits('1', 18);

before(async () => {
  if (skip) return;
  soft = makeSoftToken();
  p = await startPaymentTest({ KEY_CUSTODY: 'pkcs11', PKCS11_MODULE: soft.module, PKCS11_TOKEN_LABEL: soft.tokenLabel, PKCS11_PIN_FILE: soft.pinFile, RELAYER_LANES: '2' });
  shop = await p.t.platform.payments.addStore({ tid: 'T-2001', name: 'Custody Cafe' });
  await p.t.platform.payments.publishRateNotice({ currency: 'KRW', rate: '1500' });
  facilitator = await listeningFacilitator(p.t, { name: 'custody' });
  resource = await startPaidResource({ ...facilitator, asset: facilitator.vixp, amount: price.toString(), payTo: payee });
});
after(async () => {
  await resource?.close();
  await p?.stop();
  soft?.close();
});

/** The token leaves (its directory moved away, every session closed with it); the function brings it back. */
function removeToken(): () => void {
  const lib = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
  const p11 = new lib.PKCS11();
  p11.load(soft.module);
  try { p11.C_Initialize(); } catch (error) { if ((error as Error).message !== 'CKR_CRYPTOKI_ALREADY_INITIALIZED') throw error; }
  const [tokenDir] = readdirSync(soft.tokensDir);
  const away = path.join(soft.dir, 'away');
  renameSync(path.join(soft.tokensDir, tokenDir!), away);
  for (const slot of p11.C_GetSlotList(false)) { try { p11.C_CloseAllSessions(slot); } catch { /* empty slot */ } }
  return () => renameSync(away, path.join(soft.tokensDir, tokenDir!));
}

/** What the relayer has sent: each lane's nonce on chain, and the transactions journaled. */
async function sent() {
  const { client } = p.t.platform.chains.ethereum;
  const nonces = await Promise.all(p.t.platform.relayer.lanes.map((lane: Address) => client.getTransactionCount({ address: lane })));
  const journaled = await p.t.platform.store.db.selectFrom('chain_txs').select('tx_hash').execute();
  return { nonces, journaled: journaled.length };
}

/**
 * /readyz's custody check, as an operator watches for the token's return: its probe remakes the
 * connection, which the vault's in-line calls (sealed secrets) only ask for (the first of them after
 * the token is back may still answer 503, "try again").
 */
async function custodyStatus(): Promise<string | undefined> {
  const response = await p.t.app.inject({ method: 'GET', url: '/readyz' });
  return (response.json() as { checks?: { custody?: { status?: string } } }).checks?.custody?.status;
}

async function settle(body: unknown, waitS = 5) {
  const response = await fetch(`${facilitator.facilitatorUrl}/settle`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${facilitator.apiKey}`, prefer: `wait=${waitS}` }, body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

test('x402: a buyer paying through the published seller and client while the token is gone is not charged; settle answers 503, nothing accepted or sent; back, it pays', { skip }, async () => {
  const buyer = await fundedPayer(p.t.platform, '5');
  const before = await sent();
  const restore = removeToken();
  try {
    const answer = await payingFetch(buyer, { network: facilitator.network, asset: facilitator.vixp })(resource.url);
    assert.notEqual(answer.status, 200, 'not served unpaid');
    // The seller's facilitator asked: what it was answered.
    const requirements = { scheme: 'exact', network: facilitator.network, asset: facilitator.vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' } };
    const { payload } = await new ExactEvmClientScheme(buyer).createPaymentPayload(2, requirements);
    const body = { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload, resource: { url: resource.url, description: '', mimeType: '' } }, paymentRequirements: requirements };
    const refused = await settle(body);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal((refused.body.error as { code?: string } | undefined)?.code, 'custody.unavailable');
    assert.deepEqual(await p.t.platform.store.db.selectFrom('x402_settlements').select('id').where('payer', '=', buyer.address).execute(), [], 'nothing accepted');
  } finally {
    restore();
  }
  assert.deepEqual(await sent(), before, 'nothing signed or sent');
  assert.equal(await vixpBalanceOf(p.t.platform, buyer.address), parseUnits('5', 18));
  const paid = await payingFetch(buyer, { network: facilitator.network, asset: facilitator.vixp })(resource.url);
  assert.equal(paid.status, 200, await paid.clone().text());
  assert.equal(await vixpBalanceOf(p.t.platform, buyer.address), parseUnits('4', 18), 'charged once, once back');
});

test('x402: a settlement accepted and not sent yet, settled again while the token is gone, answers 503, never "sent"; back, it is sent once', { skip }, async () => {
  const buyer = await fundedPayer(p.t.platform, '5');
  const requirements = { scheme: 'exact', network: facilitator.network, asset: facilitator.vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' } };
  const { payload } = await new ExactEvmClientScheme(buyer).createPaymentPayload(2, requirements);
  const body = { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload, resource: { url: resource.url, description: '', mimeType: '' } }, paymentRequirements: requirements };
  const before = await sent();
  const restore = removeToken();
  let restored = false;
  try {
    // Accepted as a settle accepts it, just before the token went (the row, nothing reserved or sent).
    const authorization = (payload as { authorization: Record<string, string> }).authorization;
    const { authorizationKey } = await import('../src/chain/mined-receipt.ts');
    const now = Date.now();
    await p.t.platform.store.db.insertInto('x402_settlements').values({
      id: authorizationKey('ethereum', facilitator.vixp, buyer.address, authorization.nonce as `0x${string}`), nonce: authorization.nonce!, network: 'ethereum',
      payer: buyer.address, pay_to: payee, asset: facilitator.vixp, amount: price.toString(), valid_before: authorization.validBefore!, valid_after: authorization.validAfter!,
      signature: (payload as { signature: string }).signature, key_id: (await p.t.platform.store.db.selectFrom('facilitator_keys').select('id').where('name', '=', 'custody').executeTakeFirstOrThrow()).id,
      status: 'accepted', tx_hash: null, error_reason: null, created_at: now, updated_at: now,
    }).execute();
    const refused = await settle(body);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.doesNotMatch(JSON.stringify(refused.body), /sent, not mined/);
    assert.deepEqual(await sent(), before, 'nothing signed or sent');
    restore();
    restored = true;
  } finally {
    if (!restored) restore();
  }
  // Sent again once 5 s old (settle-payment.ts), by this settle or the sweep.
  const paid = await settle(body, 30);
  assert.deepEqual([paid.status, paid.body.success], [200, true], JSON.stringify(paid.body));
  assert.equal(await vixpBalanceOf(p.t.platform, buyer.address), parseUnits('4', 18), 'charged once');
});

test('REST pay while the token is gone is 503 and moves nothing; back, the same pay goes through', { skip }, async () => {
  const deps = { users: p.t.platform.identity.users, createWalletAccount: () => p.t.platform.wallet.createAddress() };
  const user = await addUser(deps, { id: `pay-${randomUUID()}`, password: 'custody password', name: 'Pay' });
  await p.t.platform.wallet.mint('ethereum', { to: user.address, amount: '10' });
  const login = await p.t.app.inject({ method: 'POST', url: '/v2/auth/auth-user', payload: { id: user.userId, password: 'custody password' } });
  const token = login.json().token as string;
  const pay = async () => {
    const response = await p.t.app.inject({
      method: 'POST', url: '/v1/ict/pay', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: { tokenName: 'VIXP', amount: '2', myAddress: user.address, password: 'custody password' },
    });
    return { status: response.statusCode, body: response.json() as Record<string, unknown> };
  };
  const before = await sent();
  const restore = removeToken();
  try {
    const refused = await pay();
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
  } finally {
    restore();
  }
  assert.deepEqual(await sent(), before, 'nothing signed or sent');
  assert.equal(await balanceOf(p, user.address), '10');
  assert.equal(await custodyStatus(), 'up');
  const paid = await pay();
  assert.equal(paid.status, 200, JSON.stringify(paid.body));
  assert.equal(await balanceOf(p, user.address), '8');
});

test('a gRPC payment whose TRANSFER comes while the token is gone ends res_code 10 to the app and the POS, nothing moved', { skip }, async () => {
  const user = await newUser(p, '10');
  const uuid = randomUUID();
  const app = openSession(p.client, 'DoPayment', user.token);
  const pos = openSession(p.client, 'StartPayment', shop.apiKey);
  app.send({ state: 'START_PAY', user_uuid: uuid });
  pos.send(startPay(p, shop.tid, `TR${randomUUID().slice(0, 8)}`, user, uuid, '1500'));
  const appRequest = await app.next();
  await pos.next();
  // Signed by the app's wallet (in the token) before it goes.
  const transfer = await transferFor(p, user, appRequest);
  const before = await sent();
  const restore = removeToken();
  try {
    app.send(transfer);
    const [appEnd, posEnd] = await Promise.all([app.next(), pos.next()]);
    assert.equal(appEnd.common.res_code, '10', JSON.stringify(appEnd));
    assert.equal(posEnd.common.res_code, '10', JSON.stringify(posEnd));
  } finally {
    restore();
  }
  assert.deepEqual(await sent(), before, 'nothing signed or sent');
  assert.equal(await balanceOf(p, user.address), '10');
});
