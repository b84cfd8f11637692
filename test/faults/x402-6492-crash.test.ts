import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { Address, Hex } from 'viem';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { vixpTokenAbi } from '../../src/gen/contracts/vixp-token.ts';
import { addFacilitatorKey } from '../../src/x402/facilitator-keys.ts';
import { createFacilitatorKeyRepository } from '../../src/store/facilitator-key-repository.ts';
import { waitFor } from '../support/wait-for.ts';
import { deploySafeContracts, safeAddress, safeCreation, safeDeployer, safeOwners, safeSigner, type SafeContracts } from '../support/safe-wallets.ts';
import { assertInvariants, balanceRaw, startFaultRig, units, type FaultRig } from './rig.ts';

// kill -9 of the server after it deployed an ERC-6492 payer's wallet (a Safe 1.5.0 of an allow-listed
// SafeProxyFactory, docs/x402.md#smart-wallet-payers) and before the transfer: after the restart the
// sweep settles the accepted payment once, without deploying the wallet again, and a settle asked
// again answers its one transaction. The server runs as users run it (rig.ts).
let rig: FaultRig;
let apiKey: string;
let safe: SafeContracts;
const deployer = safeDeployer();
const owners = safeOwners();

before(async () => {
  rig = await startFaultRig({ X402_EIP6492_FACTORIES: deployer.factory });
  apiKey = (await addFacilitatorKey({ keys: createFacilitatorKeyRepository(rig.operator.store.db), clock: Date.now }, { name: 'fault suite', ratePerSecond: 1000 })).key;
  // An account of the test's own deploys the Safe contracts (the anvil outlives a kill -9 of the server).
  safe = await deploySafeContracts(rig.operator.chains.ethereum.client, rig.operator.chains.ethereum.url, deployer.account);
  assert.equal(safe.factory, deployer.factory);
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

test('kill -9 between the wallet\'s deployment and its transfer (x402.after-wallet-deployment): after the restart it is paid once, deployed once, and settle asked again answers its transaction', async () => {
  const { client, chainId } = rig.operator.chains.ethereum;
  const creation = safeCreation(safe, owners, 1n);
  const wallet = await safeAddress(client, safe.factory, creation);
  const payee = privateKeyToAccount(generatePrivateKey()).address;
  await rig.operator.wallet.mint('ethereum', { to: wallet, amount: '3' });
  const requirements: PaymentRequirements = {
    scheme: 'exact', network: `eip155:${chainId}`, asset: rig.operator.contracts.ethereum.vixpToken, amount: units(1).toString(),
    payTo: payee, maxTimeoutSeconds: 300, extra: { name: 'VIXP', version: '1' },
  };
  const { payload } = await new ExactEvmClientScheme(safeSigner(chainId, wallet, owners, { factory: safe.factory, data: creation })).createPaymentPayload(2, requirements);
  const paymentPayload: PaymentPayload = { x402Version: 2, accepted: requirements, payload, resource: { url: 'http://example.test/r', description: '', mimeType: '' } };
  const body = { x402Version: 2, paymentPayload, paymentRequirements: requirements };
  const nonce = (payload as { authorization: { nonce: Hex } }).authorization.nonce;
  const deployments = () => rig.operator.store.db.selectFrom('chain_txs').selectAll()
    .where('kind', '=', 'wallet-deploy').where('reference', '=', `x402-wallet:${wallet}`).execute();

  await rig.start(['x402.after-wallet-deployment']);
  const cut = await facilitator('/settle', body);
  assert.ok('lost' in cut, `the crash cut the settle off: ${JSON.stringify(cut)}`);
  await rig.crashedAt('x402.after-wallet-deployment');
  assert.notEqual(await client.getCode({ address: wallet }), undefined, 'deployed before the crash');
  assert.equal(await balanceRaw(rig, payee), 0n, 'not paid before the crash');

  await rig.start();
  // Nobody asked again yet: the restart's sweep sends the transfer of the payment it had accepted.
  const row = await waitFor(() => rig.operator.store.db.selectFrom('x402_settlements').selectAll()
    .where('payer', '=', wallet).where('nonce', '=', nonce).where('status', '=', 'settled').executeTakeFirst(),
  { timeoutMs: 30_000, message: 'the restart settles the accepted payment' });
  assert.equal(await balanceRaw(rig, payee), units(1));
  assert.equal(await balanceRaw(rig, wallet), units(2));
  const used = await client.readContract({ address: rig.operator.contracts.ethereum.vixpToken, abi: vixpTokenAbi, functionName: 'authorizationState', args: [wallet as Address, nonce] });
  assert.equal(used, true);
  const deployed = await deployments();
  assert.equal(deployed.length, 1, 'deployed once');
  assert.equal(deployed[0]!.status, 'confirmed');

  const again = await facilitator('/settle', body);
  assert.ok(!('lost' in again) && again.body.success, JSON.stringify(again));
  assert.equal(again.body.transaction, row.tx_hash);
  assert.equal(await balanceRaw(rig, payee), units(1));
  assert.equal((await deployments()).length, 1);
  await assertInvariants(rig);
});
