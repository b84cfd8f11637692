import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createTestClient, createWalletClient, decodeFunctionData, getAddress, http, parseEventLogs, parseUnits, size, type Address, type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { startTestPlatform, type TestPlatform } from './support/platform.ts';
import { waitFor } from './support/wait-for.ts';
import { listeningFacilitator, type PaidResource, payingFetch, startPaidResource, vixpBalanceOf } from './support/x402-resource.ts';
import { vixpTokenAbi } from '../src/gen/contracts/vixp-token.ts';
import { deploySafeContracts, safeAddress as safeAddressOf, safeCreation as creationOf, safeDeployer, safeOwners, safeSigner as signerOf, type SafeContracts } from './support/safe-wallets.ts';

// Smart-wallet payers (issue 30, docs/x402.md#smart-wallet-payers): a Safe (`@safe-global/safe-smart-account`
// 1.5.0, the published contracts: singleton, proxy factory, CompatibilityFallbackHandler for ERC-1271)
// of two owners, threshold 2, pays a resource server built with `@x402/express` through the platform.
// Its signature is the owners' 130 bytes over the Safe's message hash: only the token's `bytes
// signature` form, asking the Safe's `isValidSignature`, can execute it. The platform allow-lists one
// SafeProxyFactory for ERC-6492 (X402_EIP6492_FACTORIES): a Safe of it not deployed yet is deployed by
// the platform, then pays; a Safe of another SafeProxyFactory (the same contract) is refused.

let t: TestPlatform;
let resource: PaidResource;
let network: `eip155:${number}`;
let vixp: Address;
let facilitatorUrl: string;
let apiKey: string;
let chainId: number;
/** `factory`: allow-listed for ERC-6492; `otherFactory`: not. */
let safe: SafeContracts;
/**
 * The Safe the tests pay with (deployed), one of the factory not allow-listed (never deployed), and
 * three of the allow-listed factory the platform deploys (salts 3 to 5).
 */
let wallets: { deployed: Address; counterfactual: Address; fresh: Address; contended: Address; paused: Address };
const price = parseUnits('1', 18);
const payee = privateKeyToAccount(generatePrivateKey()).address;
/** The Safes' owners. */
const owners = safeOwners();

const vixpBalance = (address: Address) => vixpBalanceOf(t.platform, address);

/** The factory call of a Safe of `owners` (salt `saltNonce`). */
const safeCreation = (saltNonce: bigint): Hex => creationOf(safe, owners, saltNonce);

/** The address of the Safe `safeCreation(saltNonce)` makes with `factory`, before it is made. */
const safeAddress = (saltNonce: bigint, factory = safe.factory) => safeAddressOf(t.platform.chains.ethereum.client, factory, safeCreation(saltNonce));

/** What `signers` sign for the Safe at `address`; `wrap`: as ERC-6492. */
const safeSigner = (address: Address, signers: PrivateKeyAccount[], wrap?: { factory: Address; data: Hex }): ClientEvmSigner => signerOf(chainId, address, signers, wrap);

function requirements(): PaymentRequirements {
  return { scheme: 'exact', network, asset: vixp, amount: price.toString(), payTo: payee, maxTimeoutSeconds: 120, extra: { name: 'VIXP', version: '1' } };
}

/** POST `path` of the facilitator with the test's key (and `headers`); its JSON answer. */
async function facilitator(path: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${facilitatorUrl}${path}`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, ...headers }, body: JSON.stringify(body),
  });
  return await response.json() as Record<string, unknown>;
}

/** A verify or settle body of what `signer` signs for the requirements (the published client's payload). */
async function paymentBody(signer: ClientEvmSigner) {
  const accepted = requirements();
  const { payload } = await new ExactEvmClientScheme(signer).createPaymentPayload(2, accepted);
  const paymentPayload: PaymentPayload = { x402Version: 2, accepted, payload, resource: { url: resource.url, description: '', mimeType: '' } };
  return { x402Version: 2, paymentPayload, paymentRequirements: accepted };
}

/** POST /x402/verify of what `signer` signs for the requirements. */
async function verify(signer: ClientEvmSigner) {
  return await facilitator('/verify', await paymentBody(signer));
}

/** The wallet deployments the platform journaled for `wallet` (deploy-wallet.ts). */
const deploymentsOf = (wallet: Address) => t.platform.store.db.selectFrom('chain_txs').selectAll()
  .where('kind', '=', 'wallet-deploy').where('reference', '=', `x402-wallet:${wallet}`).execute();

/** A transaction's gas less the intrinsic 21,000 and its calldata (4 a zero byte, 16 another): the same every run. */
async function executionGas(hash: Hex) {
  const { client } = t.platform.chains.ethereum;
  const [tx, receipt] = await Promise.all([client.getTransaction({ hash }), client.getTransactionReceipt({ hash })]);
  const calldataGas = [...Buffer.from(tx.input.slice(2), 'hex')].reduce((sum, byte) => sum + (byte === 0 ? 4n : 16n), 0n);
  return { gasUsed: receipt.gasUsed, calldataGas, execution: receipt.gasUsed - 21_000n - calldataGas, receipt, tx };
}

/** The VIXP `Transfer`s out of `from` in blocks from `fromBlock` on. */
async function transfersFrom(from: Address, fromBlock: bigint) {
  const { client } = t.platform.chains.ethereum;
  if (fromBlock > await client.getBlockNumber()) return [];
  const logs = await client.getLogs({ address: vixp, fromBlock, toBlock: 'latest' });
  return parseEventLogs({ abi: vixpTokenAbi, eventName: 'Transfer', logs }).filter((log) => log.args.from === from);
}

// The Safe contracts are deployed by an account of the test's own (not a relayer lane): its
// SafeProxyFactory (safe.factory) is allow-listed before the platform starts; safe.otherFactory is not.
const deployer = safeDeployer();

before(async () => {
  // A receipt is waited for 3 s: a deployment the paused chain does not mine is left journaled soon.
  t = await startTestPlatform({ env: { X402_EIP6492_FACTORIES: deployer.factory, RECEIPT_TIMEOUT_SECONDS: '3' } });
  ({ facilitatorUrl, apiKey, network, vixp } = await listeningFacilitator(t, { name: 'smart wallets' }));
  const { client, url } = t.platform.chains.ethereum;
  chainId = t.platform.chains.ethereum.chainId;
  resource = await startPaidResource({ facilitatorUrl, apiKey, network, asset: vixp, amount: price.toString(), payTo: payee });

  safe = await deploySafeContracts(client, url, deployer.account);
  assert.equal(safe.factory, deployer.factory);
  wallets = {
    deployed: await safeAddress(1n), counterfactual: await safeAddress(2n, safe.otherFactory), fresh: await safeAddress(3n), contended: await safeAddress(4n),
    paused: await safeAddress(5n),
  };
  // The Safe the tests pay with is deployed by the test's deployer, not the platform.
  assert.ok(client.chain);
  const wallet = createWalletClient({ account: deployer.account, chain: client.chain, transport: http(url) });
  const created = await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: safe.factory, data: safeCreation(1n) }) });
  assert.equal(created.status, 'success');
});
after(async () => {
  await resource?.close();
  await t?.stop();
});

test('a Safe (ERC-1271) pays a resource server through the platform: served once, charged once, one transfer sent alone in the token\'s bytes form', async () => {
  const wallet = wallets.deployed;
  assert.notEqual(await t.platform.chains.ethereum.client.getCode({ address: wallet }), undefined, 'the Safe is deployed');
  await t.platform.wallet.mint('ethereum', { to: wallet, amount: '10' });
  const fromBlock = await t.platform.chains.ethereum.client.getBlockNumber() + 1n;
  const [payeeBefore, servedBefore] = [await vixpBalance(payee), resource.served];

  const sent: string[] = [];
  const response = await payingFetch(safeSigner(wallet, owners), { network, asset: vixp }, sent)(resource.url);
  assert.equal(response.status, 200);
  assert.deepEqual(await response.json(), { weather: 'sunny', temperature: 21 });
  assert.equal(resource.served, servedBefore + 1);
  assert.equal(await vixpBalance(wallet), parseUnits('9', 18));
  assert.equal(await vixpBalance(payee), payeeBefore + price);
  const signature = (JSON.parse(Buffer.from(sent[0]!, 'base64').toString()) as { payload: { signature: Hex } }).payload.signature;
  assert.equal(size(signature), 130, 'two owners\' signatures');

  // One transfer, in a transaction of its own to the token: transferWithAuthorization(…, bytes signature).
  const transfers = await transfersFrom(wallet, fromBlock);
  assert.equal(transfers.length, 1);
  const row = await t.platform.store.db.selectFrom('x402_settlements').selectAll().where('payer', '=', wallet).executeTakeFirstOrThrow();
  assert.equal(row.status, 'settled');
  assert.equal(transfers[0]!.transactionHash, row.tx_hash);
  const { client } = t.platform.chains.ethereum;
  const tx = await client.getTransaction({ hash: row.tx_hash as Hex });
  assert.equal(tx.to && getAddress(tx.to), vixp);
  const call = decodeFunctionData({ abi: vixpTokenAbi, data: tx.input });
  assert.equal(call.functionName, 'transferWithAuthorization');
  assert.equal(call.args.length, 7, 'the bytes form');
  assert.equal(call.args[6], signature);

  // Its gas, less the intrinsic 21,000 and its calldata (4 a zero byte, 16 another: the nonce and
  // the signature are random), is the same every run: the token's transfer and the Safe's check.
  const receipt = await client.getTransactionReceipt({ hash: row.tx_hash as Hex });
  const bytes = Buffer.from(tx.input.slice(2), 'hex');
  const calldataGas = [...bytes].reduce((sum, byte) => sum + (byte === 0 ? 4n : 16n), 0n);
  assert.equal(receipt.gasUsed - 21_000n - calldataGas, 86_966n, `gas used ${receipt.gasUsed}, calldata ${calldataGas}`);

  // The same payment settled again answers its one transaction and moves nothing.
  const paymentPayload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString()) as PaymentPayload;
  const again = await facilitator('/settle', { x402Version: 2, paymentPayload, paymentRequirements: paymentPayload.accepted });
  assert.deepEqual(again, { success: true, payer: wallet, transaction: row.tx_hash, network, amount: price.toString() });
  assert.equal(await vixpBalance(wallet), parseUnits('9', 18));
  assert.equal((await transfersFrom(wallet, fromBlock)).length, 1);
});

test('a Safe\'s signature missing an owner is refused at verify (invalid_exact_evm_signature); paying with it is refused, nothing moves', async () => {
  const wallet = wallets.deployed;
  const stranger = privateKeyToAccount(generatePrivateKey());
  const wrong = safeSigner(wallet, [owners[0]!, stranger].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1)));
  const refusal = await verify(wrong);
  assert.equal(refusal.isValid, false);
  assert.equal(refusal.invalidReason, 'invalid_exact_evm_signature');

  const [walletBefore, servedBefore] = [await vixpBalance(wallet), resource.served];
  const fromBlock = await t.platform.chains.ethereum.client.getBlockNumber() + 1n;
  const response = await payingFetch(wrong, { network, asset: vixp })(resource.url);
  assert.equal(response.status, 402);
  assert.equal(resource.served, servedBefore);
  assert.equal(await vixpBalance(wallet), walletBefore);
  assert.equal((await transfersFrom(wallet, fromBlock)).length, 0);
});

test('an ERC-6492 signature of a Safe not deployed yet whose factory is not allow-listed is refused (eip6492_factory_not_allowed), nothing deployed or moved; around a deployed Safe it settles once, as its inner signature', async () => {
  const wallet = wallets.counterfactual;
  await t.platform.wallet.mint('ethereum', { to: wallet, amount: '10' });
  const counterfactual = safeSigner(wallet, owners, { factory: safe.otherFactory, data: safeCreation(2n) });
  const refusal = await verify(counterfactual);
  assert.equal(refusal.isValid, false);
  assert.equal(refusal.invalidReason, 'eip6492_factory_not_allowed');
  assert.match(String(refusal.invalidMessage), new RegExp(`not deployed .*its factory ${safe.otherFactory} is not one this facilitator deploys with`));

  const response = await payingFetch(counterfactual, { network, asset: vixp })(resource.url);
  assert.equal(response.status, 402);
  // Settle asked directly refuses it too (it verifies first): nothing journaled, nothing deployed.
  const settled = await facilitator('/settle', await paymentBody(counterfactual));
  assert.equal(settled.success, false);
  assert.equal(settled.errorReason, 'eip6492_factory_not_allowed');
  assert.equal(await t.platform.chains.ethereum.client.getCode({ address: wallet }), undefined, 'not deployed by the platform');
  assert.deepEqual(await deploymentsOf(wallet), []);
  assert.equal(await vixpBalance(wallet), parseUnits('10', 18));

  // The same wrapper around a Safe already deployed is its inner signature: accepted, and settled
  // with the inner signature (the token knows nothing of ERC-6492), once.
  const deployed = wallets.deployed;
  const wrapped = safeSigner(deployed, owners, { factory: safe.factory, data: safeCreation(1n) });
  assert.deepEqual(await verify(wrapped), { isValid: true, payer: deployed });
  const before = await vixpBalance(deployed);
  const fromBlock = await t.platform.chains.ethereum.client.getBlockNumber() + 1n;
  const paid = await payingFetch(wrapped, { network, asset: vixp })(resource.url);
  assert.equal(paid.status, 200);
  assert.equal(await vixpBalance(deployed), before - price);
  const transfers = await transfersFrom(deployed, fromBlock);
  assert.equal(transfers.length, 1);
  const tx = await t.platform.chains.ethereum.client.getTransaction({ hash: transfers[0]!.transactionHash });
  const call = decodeFunctionData({ abi: vixpTokenAbi, data: tx.input });
  assert.equal(call.args.length, 7);
  assert.equal(size(call.args[6] as Hex), 130, 'the inner signature');
});

test('an ERC-6492 signature of a Safe not deployed yet, of the allow-listed factory: verify deploys nothing; the payment deploys it (the platform\'s transaction, journaled), then settles once alone with the inner signature; asked again, the same transaction', async () => {
  const wallet = wallets.fresh;
  const { client } = t.platform.chains.ethereum;
  assert.equal(await client.getCode({ address: wallet }), undefined, 'not deployed');
  await t.platform.wallet.mint('ethereum', { to: wallet, amount: '10' });
  const signer = safeSigner(wallet, owners, { factory: safe.factory, data: safeCreation(3n) });

  // Verify checks the signature and simulates the factory call then the transfer, deploying nothing.
  assert.deepEqual(await verify(signer), { isValid: true, payer: wallet });
  assert.equal(await client.getCode({ address: wallet }), undefined, 'verify deploys nothing');
  // A signature missing an owner is refused as any Safe's is.
  const stranger = privateKeyToAccount(generatePrivateKey());
  const wrong = safeSigner(wallet, [owners[0]!, stranger].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1)), { factory: safe.factory, data: safeCreation(3n) });
  assert.equal((await verify(wrong)).invalidReason, 'invalid_exact_evm_signature');

  const fromBlock = await client.getBlockNumber() + 1n;
  const [payeeBefore, servedBefore] = [await vixpBalance(payee), resource.served];
  const sent: string[] = [];
  const response = await payingFetch(signer, { network, asset: vixp }, sent)(resource.url);
  assert.equal(response.status, 200);
  assert.equal(resource.served, servedBefore + 1);
  assert.equal(await vixpBalance(wallet), parseUnits('9', 18));
  assert.equal(await vixpBalance(payee), payeeBefore + price);
  assert.notEqual(await client.getCode({ address: wallet }), undefined, 'deployed');

  // One deployment: the factory's call as signed, sent by the platform account, journaled, mined before the transfer.
  const deployments = await deploymentsOf(wallet);
  assert.equal(deployments.length, 1);
  assert.equal(deployments[0]!.status, 'confirmed');
  const deployment = await executionGas(deployments[0]!.tx_hash as Hex);
  assert.equal(deployment.tx.from, t.platform.relayer.address.toLowerCase());
  assert.equal(deployment.tx.to && getAddress(deployment.tx.to), safe.factory);
  assert.equal(deployment.tx.input, safeCreation(3n));
  assert.equal(deployment.receipt.status, 'success');

  // One transfer, alone, in the bytes form, with the inner signature (the token knows nothing of ERC-6492).
  const transfers = await transfersFrom(wallet, fromBlock);
  assert.equal(transfers.length, 1);
  const row = await t.platform.store.db.selectFrom('x402_settlements').selectAll().where('payer', '=', wallet).executeTakeFirstOrThrow();
  assert.equal(row.status, 'settled');
  assert.equal(transfers[0]!.transactionHash, row.tx_hash);
  const transfer = await executionGas(row.tx_hash as Hex);
  assert.ok(deployment.receipt.blockNumber < transfer.receipt.blockNumber
    || (deployment.receipt.blockNumber === transfer.receipt.blockNumber && deployment.receipt.transactionIndex < transfer.receipt.transactionIndex));
  const call = decodeFunctionData({ abi: vixpTokenAbi, data: transfer.tx.input });
  assert.equal(call.args.length, 7, 'the bytes form');
  assert.equal(size(call.args[6] as Hex), 130, 'the inner signature');

  // Gas beyond the intrinsic 21,000 and the calldata: the same every run (the owners' addresses, the
  // nonce and the signatures are random, so the calldata's cost moves by a few gas). The deployment
  // (proxy, setup of two owners and the handler) is the platform's; the transfer is the first test's
  // 86,966 less 17,100: the payee holds VIXP already (paid by the tests before), a balance changed, not created.
  assert.equal(deployment.execution, 248_107n, `deployment: gas used ${deployment.gasUsed}, calldata ${deployment.calldataGas}`);
  assert.equal(transfer.execution, 69_866n, `transfer: gas used ${transfer.gasUsed}, calldata ${transfer.calldataGas}`);

  // The same payment settled again answers its one transaction: nothing deployed or moved again.
  const paymentPayload = JSON.parse(Buffer.from(sent[0]!, 'base64').toString()) as PaymentPayload;
  const again = await facilitator('/settle', { x402Version: 2, paymentPayload, paymentRequirements: paymentPayload.accepted });
  assert.deepEqual(again, { success: true, payer: wallet, transaction: row.tx_hash, network, amount: price.toString() });
  assert.equal(await vixpBalance(wallet), parseUnits('9', 18));
  assert.equal((await transfersFrom(wallet, fromBlock)).length, 1);
  assert.equal((await deploymentsOf(wallet)).length, 1);

  // Its next payment, still wrapped: the wallet is deployed, so no deployment, its inner signature settles.
  const next = await payingFetch(signer, { network, asset: vixp })(resource.url);
  assert.equal(next.status, 200);
  assert.equal(await vixpBalance(wallet), parseUnits('8', 18));
  assert.equal((await deploymentsOf(wallet)).length, 1);
});

test('two payments of one Safe not deployed yet settled at once: one deployment, both transfers', async () => {
  const wallet = wallets.contended;
  const { client } = t.platform.chains.ethereum;
  await t.platform.wallet.mint('ethereum', { to: wallet, amount: '10' });
  const signer = safeSigner(wallet, owners, { factory: safe.factory, data: safeCreation(4n) });
  const fromBlock = await client.getBlockNumber() + 1n;
  const bodies = await Promise.all([paymentBody(signer), paymentBody(signer)]);
  const answers = await Promise.all(bodies.map((body) => facilitator('/settle', body)));
  for (const answer of answers) assert.equal(answer.success, true, JSON.stringify(answer));
  assert.notEqual(answers[0]!.transaction, answers[1]!.transaction);
  assert.equal(await vixpBalance(wallet), parseUnits('8', 18));
  assert.equal((await transfersFrom(wallet, fromBlock)).length, 2);
  const deployments = await deploymentsOf(wallet);
  assert.equal(deployments.length, 1);
  assert.equal(deployments[0]!.status, 'confirmed');
});

test('a wallet deployment journaled and not mined (the chain paused): the payment waits for it and sends no second one; once it is mined, the transfer follows, once', async () => {
  const wallet = wallets.paused;
  const { client, url } = t.platform.chains.ethereum;
  await t.platform.wallet.mint('ethereum', { to: wallet, amount: '10' });
  const body = await paymentBody(safeSigner(wallet, owners, { factory: safe.factory, data: safeCreation(5n) }));
  const anvil = createTestClient({ mode: 'anvil', transport: http(url) });
  const fromBlock = await client.getBlockNumber() + 1n;
  await anvil.setAutomine(false);
  try {
    // Within 8 s: the deployment sent and not mined (3 s), the payment carried again after 5 s.
    const pending = await facilitator('/settle', body, { prefer: 'wait=8' });
    assert.equal(pending.errorReason, 'settlement_pending', JSON.stringify(pending));
    const deployments = await deploymentsOf(wallet);
    assert.equal(deployments.length, 1, 'one deployment journaled, none sent again');
    assert.equal(deployments[0]!.status, 'signed');
    assert.equal(await client.getCode({ address: wallet }), undefined);
    const pool = await anvil.getTxpoolContent();
    assert.deepEqual(Object.values(pool.pending).flatMap((byNonce) => Object.values(byNonce)).map((tx) => tx.hash), [deployments[0]!.tx_hash]);
  } finally {
    await anvil.setAutomine(true);
  }
  await anvil.mine({ blocks: 1 });
  assert.notEqual(await client.getCode({ address: wallet }), undefined, 'deployed by the journaled transaction');
  // The sweep carries it again: the wallet has code, the transfer goes, once.
  const row = await waitFor(() => t.platform.store.db.selectFrom('x402_settlements').selectAll().where('payer', '=', wallet).where('status', '=', 'settled').executeTakeFirst(),
    { timeoutMs: 30_000, message: 'the sweep settles the payment once the wallet is deployed' });
  const again = await facilitator('/settle', body);
  assert.deepEqual(again, { success: true, payer: wallet, transaction: row.tx_hash, network, amount: price.toString() });
  assert.equal(await vixpBalance(wallet), parseUnits('9', 18));
  assert.equal((await transfersFrom(wallet, fromBlock)).length, 1);
  assert.equal((await deploymentsOf(wallet)).length, 1);
});
