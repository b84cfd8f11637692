import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Address } from 'viem';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { FailpointName } from '../../src/shared/failpoints.ts';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { addFacilitatorKey } from '../../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../../src/store/facilitator-key-repository.ts';
import { waitFor } from '../support/wait-for.ts';
import { assertInvariants, balanceRaw, startFaultRig, units, type FaultRig } from './rig.ts';

// kill -9 of the server between verify and settle, and at each step of the settle (accepted and
// reserved but not journaled; journaled, not broadcast; broadcast, not mined): after the restart the
// accepted settlement completes once, whether or not the resource server asks again, and a settle
// asked again answers its one transaction. The server runs as users run it (rig.ts).
let rig: FaultRig;
let apiKey: string;
before(async () => {
  rig = await startFaultRig();
  apiKey = (await addFacilitatorKey({ keys: createFacilitatorKeyRepository(rig.operator.store.db), clock: Date.now }, { name: 'fault suite', ratePerSecond: 1000 })).key;
});
after(async () => { await rig?.stop(); });

async function facilitator(path: string, body: unknown): Promise<{ status: number; body: any } | { lost: string }> {
  try {
    const response = await fetch(`${rig.server.baseUrl}/x402${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` }, body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  } catch (error) {
    return { lost: (error as Error).message };
  }
}

async function payment() {
  const { operator } = rig;
  const payer = privateKeyToAccount(generatePrivateKey());
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  await operator.wallet.mint('ethereum', { to: payer.address, amount: '3' });
  const requirements: PaymentRequirements = {
    scheme: 'exact', network: `eip155:${operator.chains.ethereum.chainId}`, asset: operator.contracts.ethereum.vixpToken, amount: units(1).toString(),
    payTo: payee, maxTimeoutSeconds: 300, extra: { name: 'VIXP', version: '1' },
  };
  const { payload } = await new ExactEvmClientScheme(payer).createPaymentPayload(2, requirements);
  const paymentPayload: PaymentPayload = { x402Version: 2, accepted: requirements, payload, resource: { url: 'http://example.test/r', description: '', mimeType: '' } };
  return { payer: payer.address, payee, nonce: (payload as { authorization: { nonce: string } }).authorization.nonce, body: { x402Version: 2, paymentPayload, paymentRequirements: requirements } };
}

/** The payee got the amount once and the payer paid it once; the chain used the nonce. */
async function assertPaidOnce(p: Awaited<ReturnType<typeof payment>>) {
  assert.equal(await balanceRaw(rig, p.payee), units(1));
  assert.equal(await balanceRaw(rig, p.payer), units(2));
  const used = await rig.operator.chains.ethereum.client.readContract({
    address: rig.operator.contracts.ethereum.vixpToken, abi: vixpTokenAbi, functionName: 'authorizationState', args: [p.payer as Address, p.nonce as `0x${string}`],
  });
  assert.equal(used, true);
}

test('kill -9 between verify and settle: the settle after the restart settles it once', async () => {
  const p = await payment();
  const verified = await facilitator('/verify', p.body);
  assert.ok(!('lost' in verified) && verified.body.isValid);
  await rig.start(); // kill -9, then start again
  const settled = await facilitator('/settle', p.body);
  assert.ok(!('lost' in settled) && settled.body.success, JSON.stringify(settled));
  await assertPaidOnce(p);
  await assertInvariants(rig);
});

for (const failpoint of ['relay.before-journal', 'relay.after-journal', 'relay.after-broadcast'] as FailpointName[]) {
  test(`kill -9 during settle (${failpoint}): after the restart it completes once, and settle asked again answers its transaction`, async () => {
    const p = await payment();
    await rig.start([failpoint]);
    const cut = await facilitator('/settle', p.body);
    assert.ok('lost' in cut, `the crash cut the settle off: ${JSON.stringify(cut)}`);
    await rig.crashedAt(failpoint);
    await rig.start();
    // Nobody asked again yet: the restart finished it (the journal's recovery, or the x402 sweep).
    const row = await rig.operator.store.db.selectFrom('x402_settlements').selectAll().where('nonce', '=', p.nonce).executeTakeFirstOrThrow();
    await assertPaidOnce(p);
    // Its receipt is issued when the restart records it settled, before anyone asks again or reads it.
    const receipt = await waitFor(() => rig.operator.store.db.selectFrom('receipts').selectAll().where('kind', '=', 'x402').where('source_id', '=', row.id).executeTakeFirst(),
      { timeoutMs: 30_000, message: 'the restart issues the settled payment\'s receipt' });
    const again = await facilitator('/settle', p.body);
    assert.ok(!('lost' in again) && again.body.success, JSON.stringify(again));
    const settled = await rig.operator.store.db.selectFrom('x402_settlements').selectAll().where('nonce', '=', p.nonce).executeTakeFirstOrThrow();
    assert.equal(settled.status, 'settled');
    assert.equal(again.body.transaction, settled.tx_hash);
    assert.equal(receipt.transaction_id, settled.tx_hash);
    assert.ok(['accepted', 'settled'].includes(row.status));
    await assertPaidOnce(p);
    await assertInvariants(rig);
  });
}
