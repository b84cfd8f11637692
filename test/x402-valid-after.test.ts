/**
 * x402 `validAfter` in the future (issue 41): what the platform holds and what it refuses, on a
 * platform as `npm start` runs it (real anvil). An authorization that can never be executed before
 * it expires, or whose validAfter lies beyond `X402_MAX_HOLD_SECONDS`, is refused at verify and at
 * settle with the published reason; one held is carried by the periodic sweep once due, also after a
 * restart; none of them costs the platform gas before it can be executed.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { toHex, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { fundedPayer, listeningFacilitator, vixpBalanceOf } from './support/x402-resource.ts';
import { transferAuthorizationTypes } from '../src/wallet/authorize-transfer.ts';
import { waitFor } from './support/wait-for.ts';

let t: TestPlatform;
let facilitator: Awaited<ReturnType<typeof listeningFacilitator>>;
const payee = privateKeyToAccount(generatePrivateKey()).address;
const nowS = () => BigInt(Math.floor(Date.now() / 1000));
const hold = 600n;

before(async () => {
  t = await startTestPlatform({ env: { X402_MAX_HOLD_SECONDS: String(hold) } });
  facilitator = await listeningFacilitator(t, { name: 'valid-after' });
});
after(async () => {
  await t?.stop();
});

/** A settle body `payer` signed for 1000 base units with this window. */
async function payment(payer: PrivateKeyAccount, validAfter: bigint, validBefore: bigint) {
  const { chainId } = t.platform.chains.ethereum;
  const message = { from: payer.address, to: payee, value: 1000n, validAfter, validBefore, nonce: toHex(randomBytes(32)) as Hex };
  const signature = await payer.signTypedData({
    domain: { name: 'VIXP', version: '1', chainId, verifyingContract: facilitator.vixp }, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message,
  });
  const requirements = { scheme: 'exact', network: facilitator.network, asset: facilitator.vixp, amount: '1000', payTo: payee, maxTimeoutSeconds: 600, extra: { name: 'VIXP', version: '1' } };
  const authorization = Object.fromEntries(Object.entries(message).map(([k, v]) => [k, String(v)]));
  return {
    x402Version: 2, nonce: message.nonce,
    paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization, signature }, resource: { url: 'http://example.test/weather', description: '', mimeType: '' } },
    paymentRequirements: requirements,
  };
}

async function post(path: string, body: unknown, url = facilitator.facilitatorUrl, apiKey = facilitator.apiKey) {
  const response = await fetch(`${url}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, prefer: 'wait=1' }, body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

/** What the platform spends gas from: each lane's balance and nonce, and the transactions it journaled. */
async function gasState() {
  const { client } = t.platform.chains.ethereum;
  const lanes = await Promise.all(t.platform.relayer.lanes.map(async (lane: Address) =>
    [lane, await client.getBalance({ address: lane }), await client.getTransactionCount({ address: lane })] as const));
  const txs = await t.platform.store.db.selectFrom('chain_txs').select('tx_hash').execute();
  return { lanes, txs: txs.length };
}

test('a validAfter beyond X402_MAX_HOLD_SECONDS (31 days, a year, past 2^53 ms), or a window no block can execute in, is refused at verify and settle: nothing sent, no gas', async () => {
  const now = nowS();
  const cases: Array<[string, bigint, bigint, string]> = [
    ['31 days ahead', now + 31n * 86_400n, now + 32n * 86_400n, 'invalid_exact_evm_payload_authorization_valid_after'],
    ['a year ahead', now + 365n * 86_400n, now + 366n * 86_400n, 'invalid_exact_evm_payload_authorization_valid_after'],
    ['above 2^53 ms', 2n ** 53n, 2n ** 53n + 3600n, 'invalid_exact_evm_payload_authorization_valid_after'],
    ['just past the hold', now + hold + 5n, now + hold + 3600n, 'invalid_exact_evm_payload_authorization_valid_after'],
    // EIP-3009 executes only in a block with validAfter < timestamp < validBefore: no second is left.
    ['validAfter = validBefore − 1', now + 30n, now + 31n, 'invalid_exact_evm_payload_authorization_valid_after'],
    // Open for under 6 s once due: it would expire while it is being settled.
    ['open 3 s once due', now + 30n, now + 34n, 'invalid_exact_evm_payload_authorization_valid_before'],
  ];
  // Funded first: minting is the platform account's own transaction.
  const payers = await Promise.all(cases.map(() => fundedPayer(t.platform, '1')));
  const before = await gasState();
  for (const [i, [name, validAfter, validBefore, reason]] of cases.entries()) {
    const payer = payers[i]!;
    const body = await payment(payer, validAfter, validBefore);
    const verified = await post('/verify', body);
    assert.deepEqual([verified.status, verified.body.isValid, verified.body.invalidReason], [200, false, reason], `${name}: ${JSON.stringify(verified.body)}`);
    const settled = await post('/settle', body);
    assert.deepEqual([settled.status, settled.body.success, settled.body.errorReason, settled.body.transaction], [200, false, reason, ''], `${name}: ${JSON.stringify(settled.body)}`);
    assert.equal(await vixpBalanceOf(t.platform, payer.address), 10n ** 18n, `${name}: nothing moved`);
  }
  const rows = await t.platform.store.db.selectFrom('x402_settlements').select('id').execute();
  assert.equal(rows.length, 0, 'none accepted');
  assert.deepEqual(await gasState(), before, 'no transaction, no gas');
});

test('one held (validAfter ahead, within the hold) answers pending "not sent"; across a restart the sweep sends it once due, in a block after validAfter, once', async () => {
  const payer = await fundedPayer(t.platform, '1');
  const validAfter = nowS() + 12n;
  const body = await payment(payer, validAfter, validAfter + 600n);
  const before = await gasState();
  const held = await post('/settle', body);
  assert.equal(held.status, 202, JSON.stringify(held.body));
  assert.deepEqual([held.body.success, held.body.errorReason, held.body.transaction], [false, 'settlement_pending', '']);
  assert.match(String(held.body.errorMessage), /not sent yet: held until its validAfter/);
  assert.deepEqual(await gasState(), before, 'held: nothing sent');

  // Restarted on the same data before it is due: nothing in memory carries it, the stored row does.
  const dataDir = t.dataDir;
  await t.stop({ keepData: true });
  t = await startTestPlatform({ dataDir, env: { X402_MAX_HOLD_SECONDS: String(hold) } });
  facilitator = await listeningFacilitator(t, { name: 'after restart' });
  const { client } = t.platform.chains.ethereum;
  const settled = await waitFor(async () => {
    const row = await t.platform.store.db.selectFrom('x402_settlements').select(['status', 'tx_hash']).where('nonce', '=', body.nonce).executeTakeFirstOrThrow();
    return row.status === 'accepted' ? undefined : row;
  }, { timeoutMs: 120_000, message: 'settled by the sweep once due' });
  assert.equal(settled.status, 'settled');
  const receipt = await client.getTransactionReceipt({ hash: settled.tx_hash as Hex });
  assert.equal(receipt.status, 'success');
  const block = await client.getBlock({ blockNumber: receipt.blockNumber });
  assert.ok(block.timestamp > validAfter, `mined at ${block.timestamp}, validAfter ${validAfter}`);
  assert.equal(await vixpBalanceOf(t.platform, payee), 1000n);
  assert.equal(await vixpBalanceOf(t.platform, payer.address), 10n ** 18n - 1000n, 'charged once');
  const failed = await t.platform.store.db.selectFrom('chain_txs').select('tx_hash').where('status', '=', 'failed').execute();
  assert.deepEqual(failed, [], 'no reverted transaction');
});
