import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createWalletClient, getAddress, http, maxUint256, parseUnits, serializeErc6492Signature, zeroAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { vixpName, vixpSymbol, type PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { Relayer } from '../chain/relayer.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import { openStore, type Store } from '../store/db.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { networkNames } from '#shared/networks.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';
import { deploySafeContracts, safeAddress, safeCreation, safeDeployer, safeOwners, safeSigner } from '../../test/support/safe-wallets.ts';
import { startRpcProxy } from '../../test/support/rpc-proxy.ts';
import { createChainClients } from '../chain/chain-clients.ts';
import { resetAssetContractCache } from '@x402/evm';
import { verifyPayment } from './verify-payment.ts';
import { deployShapedToken } from '../../test/support/shaped-tokens.ts';

// The facilitator's money gate (docs/x402.md, the reasons table): every refusal of POST /x402/verify
// on a real anvil with the VIXP token deployed (balances, nonce state and signatures read from it),
// the real authorization and settlement-token repositories on a real SQLite store. The relayer is
// only its addresses (verify never sends): the platform account and its lanes.

const owner = devAccount(0);
const platform = devAccount(2);
const payTo = getAddress(devAccount(3).address);
const funds = parseUnits('100', 18);
const x402Network = `eip155:${foundry.id}`;
const network = networkNames.find(() => true)!;
const nowS = () => Math.floor(Date.now() / 1000);

let parts: ChainParts;
let store: Store;
let dataDir: string;
let token: Address;
let other: Address;
let deps: Parameters<typeof verifyPayment>[0];

async function deployToken(name: string, symbol: string): Promise<Address> {
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
  const hash = await wallet.deployContract({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [name, symbol, owner.address, parseUnits('1000000', 18)] });
  const receipt = await parts.chains[network].client.waitForTransactionReceipt({ hash });
  return getAddress(receipt.contractAddress!);
}

async function send(address: Address, functionName: 'transfer' | 'cancelAuthorization' | 'transferWithAuthorization', args: readonly unknown[]) {
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
  const hash = await wallet.writeContract({ address, abi: vixpTokenAbi, functionName, args } as never);
  const receipt = await parts.chains[network].client.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
}

before(async () => {
  parts = await startChainParts({ managed: true });
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-x402-verify-'));
  store = await openStore({ dataDir });
  token = await deployToken(vixpName, vixpSymbol);
  other = await deployToken('Other Dollar', 'ODL');
  const settlementTokens = createSettlementTokenRepository(store.db);
  await settlementTokens.allow({ network, contractAddress: other, symbol: 'ODL', allowedAt: 1 });
  const contracts = Object.fromEntries(networkNames.map((n) => [n, { vixpToken: token }])) as unknown as PlatformContractsByNetwork;
  deps = {
    chains: parts.chains, contracts, settlementTokens, clock: () => Date.now(),
    relayer: { address: platform.address, lanes: [platform.address] } as unknown as Relayer,
    authorizations: createAuthorizationRepository(store.db),
  };
});
after(async () => {
  await store?.close();
  await parts?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

/** A fresh payer holding `balance` of the token at `asset`. */
async function payer(balance = funds, asset = token): Promise<LocalAccount> {
  const account = privateKeyToAccount(generatePrivateKey());
  if (balance > 0n) await send(asset, 'transfer', [account.address, balance]);
  return account;
}

interface Terms { value?: bigint; amount?: bigint; to?: Address; validAfter?: bigint; validBefore?: bigint; nonce?: Hex; asset?: Address; name?: string; version?: string }

/** The request body of a payment signed by `from` (or with `signature`), as a resource server posts it. */
async function request(from: LocalAccount, terms: Terms = {}, sign: { by?: LocalAccount; domainName?: string; signature?: Hex } = {}) {
  const asset = terms.asset ?? token;
  const authorization = {
    from: from.address, to: terms.to ?? payTo, value: terms.value ?? 1000n, validAfter: terms.validAfter ?? 0n,
    validBefore: terms.validBefore ?? BigInt(nowS() + 600), nonce: terms.nonce ?? (`0x${randomBytes(32).toString('hex')}` as Hex),
  };
  const signature = sign.signature ?? await (sign.by ?? from).signTypedData!({
    domain: { name: sign.domainName ?? (asset === token ? vixpName : 'Other Dollar'), version: terms.version ?? '1', chainId: foundry.id, verifyingContract: asset },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: authorization,
  });
  const requirements = {
    scheme: 'exact', network: x402Network, asset, amount: String(terms.amount ?? authorization.value), payTo, maxTimeoutSeconds: 60,
    extra: { name: terms.name ?? (asset === token ? vixpName : 'Other Dollar'), version: terms.version ?? '1' },
  };
  const text = Object.fromEntries(Object.entries(authorization).map(([k, v]) => [k, typeof v === 'bigint' ? String(v) : v]));
  return {
    authorization, signature,
    body: { x402Version: 2, paymentPayload: { x402Version: 2, accepted: requirements, payload: { authorization: text, signature } }, paymentRequirements: requirements },
  };
}

/** The refusal's reason and payer, or 'valid'. */
async function reasonOf(body: unknown): Promise<string> {
  const { response, verified } = await verifyPayment(deps, body);
  if (response.isValid) {
    assert.ok(verified, 'a valid payment comes with what settle needs');
    return 'valid';
  }
  assert.equal(verified, undefined, 'a refused payment carries nothing to settle');
  return response.invalidReason!;
}

/** The body with its requirements (both copies, or only the one named) changed. */
function withRequirements(body: Awaited<ReturnType<typeof request>>['body'], change: Record<string, unknown>, which: 'both' | 'accepted' = 'both') {
  const accepted = { ...body.paymentPayload.accepted, ...change };
  return {
    ...body, paymentPayload: { ...body.paymentPayload, accepted },
    paymentRequirements: which === 'both' ? { ...body.paymentRequirements, ...change } : body.paymentRequirements,
  };
}

describe('verifyPayment', () => {
  test('a payment signed by a funded payer is valid: the network, asset, authorization and signature settle needs; nothing is written', async () => {
    const from = await payer();
    const { body, authorization, signature } = await request(from);
    const { response, verified } = await verifyPayment(deps, body);
    assert.deepEqual(response, { isValid: true, payer: from.address });
    assert.deepEqual(verified, {
      network, x402Network, signature, authorization,
      asset: { address: token, symbol: vixpSymbol, decimals: 18, name: vixpName, version: '1' },
    });
    assert.equal(await deps.authorizations.held({ network, contractAddress: token, fromAddress: from.address }), 0n);
  });

  test('an allow-listed token is settled in its own EIP-712 domain; another token is refused invalid_payment_requirements', async () => {
    const from = await payer(funds, other);
    const { body } = await request(from, { asset: other });
    const { response, verified } = await verifyPayment(deps, body);
    assert.equal(response.isValid, true, JSON.stringify(response));
    assert.deepEqual(verified?.asset, { address: other, symbol: 'ODL', decimals: 18, name: 'Other Dollar', version: '1' });
    const unknown = await request(from, { asset: getAddress(`0x${'12'.repeat(20)}`) });
    const refusal = await verifyPayment(deps, unknown.body);
    assert.deepEqual(refusal.response, {
      isValid: false, invalidReason: 'invalid_payment_requirements', payer: from.address,
      invalidMessage: `asset ${getAddress(`0x${'12'.repeat(20)}`)} is not a token settled on ${x402Network} (GET /x402/supported)`,
    });
  });

  test('a USDC-shaped token is verified in its 6 decimals under the EIP-712 version the allow-list recorded ("2"); an account-path token is no x402 asset', async () => {
    const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
    const usdc = await deployShapedToken(parts.chains[network].client as never, wallet, 'usdc');
    const usdt = await deployShapedToken(parts.chains[network].client as never, wallet, 'usdt');
    const allowList = createSettlementTokenRepository(store.db);
    await allowList.allow({ network, contractAddress: usdc, symbol: 'USDC', name: 'USD Coin', decimals: 6, eip712Version: '2', transferPath: 'eip3009', allowedAt: 2 });
    await allowList.allow({ network, contractAddress: usdt, symbol: 'USDT', name: 'Tether USD', decimals: 6, eip712Version: null, transferPath: 'account', allowedAt: 2 });
    const from = await payer(parseUnits('5', 6), usdc);
    const paid = await verifyPayment(deps, (await request(from, { asset: usdc, value: 1_500_000n, name: 'USD Coin', version: '2' }, { domainName: 'USD Coin' })).body);
    assert.equal(paid.response.isValid, true, JSON.stringify(paid.response));
    assert.deepEqual(paid.verified?.asset, { address: usdc, symbol: 'USDC', decimals: 6, name: 'USD Coin', version: '2' });
    const versionOne = await verifyPayment(deps, (await request(from, { asset: usdc, name: 'USD Coin', version: '1' }, { domainName: 'USD Coin' })).body);
    assert.deepEqual([versionOne.response.invalidReason, versionOne.response.invalidMessage], ['invalid_exact_evm_token_version_mismatch', 'extra.version must be "2"']);
    const tether = await verifyPayment(deps, (await request(from, { asset: usdt, name: 'Tether USD' }, { domainName: 'Tether USD' })).body);
    assert.equal(tether.response.invalidReason, 'invalid_payment_requirements', 'no EIP-3009: the exact scheme cannot move it');
  });

  test('a malformed request is refused with the parser\'s reason and the payer it names', async () => {
    const from = await payer(0n);
    const { body } = await request(from);
    const { response } = await verifyPayment(deps, { ...body, x402Version: 1 });
    assert.equal(response.isValid, false);
    assert.equal(response.invalidReason, 'invalid_x402_version');
    assert.ok(response.invalidMessage);
    const unnamed = await verifyPayment(deps, 'nonsense');
    assert.equal(unnamed.response.invalidReason, 'invalid_payload');
    assert.equal('payer' in unnamed.response, false, 'no payer named, none answered');
  });

  test('another scheme, in the requirements or the accepted copy, is refused unsupported_scheme', async () => {
    const from = await payer(0n);
    const { body } = await request(from);
    const { response } = await verifyPayment(deps, withRequirements(body, { scheme: 'upto' }));
    assert.deepEqual(response, { isValid: false, invalidReason: 'unsupported_scheme', invalidMessage: 'this facilitator settles the exact scheme', payer: from.address });
    assert.equal(await reasonOf(withRequirements(body, { scheme: 'upto' }, 'accepted')), 'unsupported_scheme');
    const requirementsOnly = { ...body, paymentRequirements: { ...body.paymentRequirements, scheme: 'upto' } };
    assert.equal(await reasonOf(requirementsOnly), 'unsupported_scheme', 'the requirements alone of another scheme');
  });

  test('a network not ours, or an accepted copy naming another, is refused invalid_network', async () => {
    const from = await payer(0n);
    const { body } = await request(from);
    const { response } = await verifyPayment(deps, withRequirements(body, { network: 'eip155:1' }));
    assert.deepEqual(response, { isValid: false, invalidReason: 'invalid_network', invalidMessage: 'network eip155:1 is not settled here (GET /x402/supported)', payer: from.address });
    assert.equal(await reasonOf(withRequirements(body, { network: 'eip155:1' }, 'accepted')), 'invalid_network');
  });

  test('a zero amount, required or signed, is refused invalid_exact_evm_authorization_value', async () => {
    const from = await payer();
    const required = await request(from, { amount: 0n, value: 1000n });
    const { response } = await verifyPayment(deps, required.body);
    assert.deepEqual(response, { isValid: false, invalidReason: 'invalid_exact_evm_authorization_value', invalidMessage: 'the amount must be above 0', payer: from.address });
    assert.equal(await reasonOf((await request(from, { amount: 1000n, value: 0n })).body), 'invalid_exact_evm_authorization_value');
    assert.equal(await reasonOf((await request(from, { amount: 1n, value: 1n })).body), 'valid');
  });

  test('extra.name and extra.version other than the token\'s domain are refused with their reasons', async () => {
    const from = await payer();
    const name = await verifyPayment(deps, (await request(from, { name: 'VIXP Token' })).body);
    assert.deepEqual(name.response, { isValid: false, invalidReason: 'invalid_exact_evm_token_name_mismatch', invalidMessage: `extra.name must be "${vixpName}", the token's EIP-712 name`, payer: from.address });
    const version = await verifyPayment(deps, (await request(from, { version: '2' })).body);
    assert.deepEqual(version.response, { isValid: false, invalidReason: 'invalid_exact_evm_token_version_mismatch', invalidMessage: 'extra.version must be "1"', payer: from.address });
    // Requirements without `extra` at all: refused by name, never a thrown TypeError.
    const { body } = await request(from);
    const { extra: _omitted, ...bare } = body.paymentRequirements;
    const none = await verifyPayment(deps, { ...body, paymentPayload: { ...body.paymentPayload, accepted: bare }, paymentRequirements: bare });
    assert.deepEqual(none.response, { isValid: false, invalidReason: 'invalid_exact_evm_token_name_mismatch', invalidMessage: `extra.name must be "${vixpName}", the token's EIP-712 name`, payer: from.address });
  });

  test('a window no block can execute (validAfter not 2 s before validBefore) is refused valid_after; one open under 6 s valid_before; 7 s is accepted (not due yet)', async () => {
    const from = await payer();
    const at = BigInt(nowS() + 300);
    const never = await verifyPayment(deps, (await request(from, { validAfter: at, validBefore: at })).body);
    assert.deepEqual(never.response, {
      isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_after', payer: from.address,
      invalidMessage: 'validAfter must be at least 2 s before validBefore: no block can execute this authorization',
    });
    assert.equal(await reasonOf((await request(from, { validAfter: at + 1n, validBefore: at })).body), 'invalid_exact_evm_payload_authorization_valid_after');
    // EIP-3009 executes it only in a block with validAfter < timestamp < validBefore: none at validBefore − 1.
    assert.equal(await reasonOf((await request(from, { validAfter: at - 1n, validBefore: at })).body), 'invalid_exact_evm_payload_authorization_valid_after');
    const short = await verifyPayment(deps, (await request(from, { validAfter: at - 6n, validBefore: at })).body);
    assert.deepEqual(short.response, {
      isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_before', payer: from.address,
      invalidMessage: 'validBefore leaves under 6 s to settle it in once it is valid',
    });
    assert.equal(await reasonOf((await request(from, { validAfter: at - 7n, validBefore: at })).body), 'valid');
  });

  test('a validAfter further ahead than the hold (X402_MAX_HOLD_SECONDS, default 600 s) is refused valid_after; exactly the hold is accepted', async () => {
    const from = await payer();
    const fixed = Date.now();
    const nowSeconds = BigInt(Math.floor(fixed / 1000));
    const far = { validBefore: nowSeconds + 10n ** 30n };
    for (const [maxHoldSeconds, hold] of [[undefined, 600n], [60n, 60n], [0n, 0n]] as const) {
      const held = { ...deps, clock: () => fixed, ...(maxHoldSeconds !== undefined && { maxHoldSeconds }) };
      const beyond = await verifyPayment(held, (await request(from, { ...far, validAfter: nowSeconds + hold + 1n })).body);
      assert.deepEqual(beyond.response, {
        isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_after', payer: from.address,
        invalidMessage: `validAfter is more than ${hold} s ahead: this facilitator holds a payment at most that long (X402_MAX_HOLD_SECONDS)`,
      });
      // At the hold itself, accepted; with a hold of 0 that is a validAfter due now, checked by the published verifier's simulation instead.
      if (hold > 0n) assert.equal((await verifyPayment(held, (await request(from, { ...far, validAfter: nowSeconds + hold })).body)).response.isValid, true, `hold ${hold}`);
    }
    // Past 2^53 (a timer's limit) and 2^64: refused the same, every number exact.
    for (const validAfter of [2n ** 53n, 2n ** 64n]) {
      assert.equal(await reasonOf((await request(from, { validAfter, validBefore: validAfter + 3600n })).body), 'invalid_exact_evm_payload_authorization_valid_after');
    }
  });

  test('a window a settlement batch cannot carry is refused valid_before; 2^256 − 1 is carried', async () => {
    const from = await payer();
    const half = 2n ** 128n - 1n;
    const uncarried = await verifyPayment(deps, (await request(from, { validBefore: half })).body);
    assert.deepEqual(uncarried.response, {
      isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_before', payer: from.address,
      invalidMessage: 'validAfter must be below 2^128 − 1, validBefore below 2^128 − 1 or exactly 2^256 − 1',
    });
    assert.equal(await reasonOf((await request(from, { validBefore: half - 1n })).body), 'valid');
    assert.equal(await reasonOf((await request(from, { validBefore: maxUint256 })).body), 'valid');
  });

  test('a due payment is checked by the published verifier: another signer, another payTo, another amount, an expired window', async () => {
    const from = await payer();
    assert.equal(await reasonOf((await request(from, {}, { by: devAccount(5) })).body), 'invalid_exact_evm_signature');
    assert.equal(await reasonOf((await request(from, { to: getAddress(devAccount(4).address) })).body), 'invalid_exact_evm_recipient_mismatch');
    assert.equal(await reasonOf((await request(from, { amount: 999n, value: 1000n })).body), 'invalid_exact_evm_payload_authorization_value_mismatch');
    assert.equal(await reasonOf((await request(from, { validBefore: BigInt(nowS() + 3) })).body), 'invalid_exact_evm_payload_authorization_valid_before');
    // A payer short of the amount: the published verifier's own reason stands (only a failed simulation is diagnosed).
    const short = await payer(10n);
    const forged = await verifyPayment(deps, (await request(short, {}, { by: devAccount(5) })).body);
    assert.deepEqual(forged.response, { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer: short.address });
    // A simulation failing for neither cause read (funds, exactly the amount, and an unused nonce): a
    // transfer to the zero address, which the token refuses. The published verifier's reason stands.
    const funded = await payer(1000n);
    const nowhere = await request(funded, { to: zeroAddress });
    const refusedByToken = await verifyPayment(deps, withRequirements(nowhere.body, { payTo: zeroAddress }));
    const { invalidMessage, ...refusal } = refusedByToken.response;
    assert.deepEqual(refusal, { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', payer: funded.address });
    assert.match(String(invalidMessage), /transferWithAuthorization.*reverted/, 'the simulation\'s revert, named by the published verifier');
  });

  test('a payment not due yet is checked by the same fields, with the published reasons', async () => {
    const from = await payer();
    const later = { validAfter: BigInt(nowS() + 120) };
    assert.equal(await reasonOf((await request(from, later)).body), 'valid');
    const wrong = await verifyPayment(deps, (await request(from, later, { by: devAccount(5) })).body);
    assert.deepEqual(wrong.response, { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer: from.address });
    assert.equal(await reasonOf((await request(from, later, { domainName: 'VIXP Token' })).body), 'invalid_exact_evm_signature');
    assert.equal(await reasonOf((await request(from, later, { signature: '0x1234' })).body), 'invalid_exact_evm_signature');
    const elsewhere = await verifyPayment(deps, (await request(from, { ...later, to: getAddress(devAccount(4).address) })).body);
    assert.deepEqual(elsewhere.response, { isValid: false, invalidReason: 'invalid_exact_evm_recipient_mismatch', payer: from.address });
    const more = await verifyPayment(deps, (await request(from, { ...later, amount: 999n, value: 1000n })).body);
    assert.deepEqual(more.response, { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch', payer: from.address });
    // validBefore at least 6 seconds after the first second it can be executed in (validAfter + 1): 7 after validAfter is accepted, 6 refused.
    const fixed = Date.now();
    const clocked = { ...deps, clock: () => fixed };
    const window = (open: number) => ({ validAfter: BigInt(Math.floor(fixed / 1000) + 1), validBefore: BigInt(Math.floor(fixed / 1000) + 1 + open) });
    const six = await verifyPayment(clocked, (await request(from, window(6))).body);
    assert.deepEqual(six.response, { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_valid_before', invalidMessage: 'validBefore leaves under 6 s to settle it in once it is valid', payer: from.address });
    assert.equal((await verifyPayment(clocked, (await request(from, window(7))).body)).response.isValid, true);
  });

  test('validAfter is due from the clock\'s second on: then the published verifier\'s simulation checks it', async () => {
    const from = await payer(10n);
    const fixed = Date.now();
    const clocked = { ...deps, clock: () => fixed };
    // Not due yet (validAfter one second after the clock's), nothing is simulated: the balance read refuses it.
    const ahead = await request(from, { value: 20n, validAfter: BigInt(Math.floor(fixed / 1000) + 1), validBefore: BigInt(nowS() + 5000) });
    const held = await verifyPayment(clocked, ahead.body);
    assert.deepEqual(held.response, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the balance, less what the payer\'s authorizations in flight hold, is below the amount', payer: from.address });
    const now = await request(from, { value: 20n, validAfter: BigInt(Math.floor(fixed / 1000)), validBefore: BigInt(nowS() + 5000) });
    assert.deepEqual((await verifyPayment(clocked, now.body)).response, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the payer\'s balance is below the amount', payer: from.address });
  });

  test('a nonce used on chain is refused nonce_already_used, due (the simulation fails) or not (the nonce state is read)', async () => {
    const from = await payer();
    const used = await request(from);
    const { authorization: a, signature } = used;
    await send(token, 'transferWithAuthorization', [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature]);
    const { response } = await verifyPayment(deps, used.body);
    assert.deepEqual(response, { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', invalidMessage: 'this authorization was used or cancelled on chain', payer: from.address });

    const later = await request(from, { validAfter: BigInt(nowS() + 120) });
    assert.equal(await reasonOf(later.body), 'valid');
    const cancel = await from.signTypedData!({
      domain: { name: vixpName, version: '1', chainId: foundry.id, verifyingContract: token },
      types: { CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }] },
      primaryType: 'CancelAuthorization', message: { authorizer: from.address, nonce: later.authorization.nonce },
    });
    await send(token, 'cancelAuthorization', [from.address, later.authorization.nonce, cancel]);
    const cancelled = await verifyPayment(deps, later.body);
    assert.deepEqual(cancelled.response, { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', invalidMessage: 'this authorization was used or cancelled on chain', payer: from.address });
  });

  /** An authorization of `from` recorded by the platform, `status` and `value`, under `nonce`. */
  async function recorded(from: Address, nonce: string, value: bigint, status: 'reserved' | 'submitted' | 'expired' = 'submitted', contract: Address = token) {
    await store.db.insertInto('authorizations').values({
      nonce, network, reference: `x402:${randomBytes(4).toString('hex')}`, contract_address: contract, from_address: from, to_address: payTo,
      value: String(value), valid_before: nowS() + 600, from_block: 0, status, tx_hash: null, cancel_tx_hash: null,
      created_at: Date.now(), updated_at: Date.now(), chain_nonce: null,
    }).execute();
  }

  test('a nonce already submitted to us is refused nonce_already_used, whatever the chain says', async () => {
    const from = await payer();
    const submitted = await request(from);
    await recorded(from.address, authorizationKey(network, token, from.address, submitted.authorization.nonce), 1000n, 'expired');
    const { response } = await verifyPayment(deps, submitted.body);
    assert.deepEqual(response, { isValid: false, invalidReason: 'invalid_exact_evm_nonce_already_used', invalidMessage: 'this authorization was already submitted for settlement', payer: from.address });
  });

  test('the balance less what the payer\'s authorizations in flight hold must cover the amount: exactly is enough', async () => {
    const from = await payer(5000n);
    await recorded(from.address, `0x${randomBytes(32).toString('hex')}`, 3000n, 'reserved');
    await recorded(from.address, `0x${randomBytes(32).toString('hex')}`, 999n, 'reserved', other);
    assert.equal(await reasonOf((await request(from, { value: 2000n })).body), 'valid');
    const { response } = await verifyPayment(deps, (await request(from, { value: 2001n })).body);
    assert.deepEqual(response, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the balance, less what the payer\'s authorizations in flight hold, is below the amount', payer: from.address });
    // Above the balance itself: the simulation fails, the balance read names why.
    const above = await verifyPayment(deps, (await request(from, { value: 5001n })).body);
    assert.deepEqual(above.response, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the payer\'s balance is below the amount', payer: from.address });
  });

  test('an ERC-6492 signature of a wallet not deployed whose factory is not allow-listed is refused', async () => {
    const from = await payer();
    const inner = await request(from);
    const wrapped = serializeErc6492Signature({ address: getAddress(`0x${'34'.repeat(20)}`), data: '0xabcdef', signature: inner.signature });
    const { response } = await verifyPayment(deps, (await request(from, { nonce: inner.authorization.nonce }, { signature: wrapped })).body);
    assert.equal(response.isValid, false);
    assert.equal(response.invalidReason, 'eip6492_factory_not_allowed');
    assert.equal(response.payer, from.address);
    assert.ok(response.invalidMessage);
  });

  test('an ERC-6492 wrapper around a deployed Safe is checked as its inner signature: valid, and refused without an owner\'s signature', async () => {
    const { client } = parts.chains[network];
    const safe = await deploySafeContracts(client, parts.anvil.url, safeDeployer().account);
    const owners = safeOwners();
    const creation = safeCreation(safe, owners, 1n);
    const address = await safeAddress(client, safe.factory, creation);
    const deployer = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
    assert.equal((await client.waitForTransactionReceipt({ hash: await deployer.sendTransaction({ to: safe.factory, data: creation }) })).status, 'success');
    await send(token, 'transfer', [address, funds]);
    const wrap = { factory: safe.factory, data: creation };
    const wallet = safeSigner(foundry.id, address, owners, wrap) as unknown as LocalAccount;
    const { response, verified } = await verifyPayment(deps, (await request(wallet)).body);
    assert.deepEqual(response, { isValid: true, payer: address });
    assert.ok(verified, 'what settle needs');
    const stranger = privateKeyToAccount(generatePrivateKey());
    const missingOwner = safeSigner(foundry.id, address, [owners[0]!, stranger].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1)), wrap) as unknown as LocalAccount;
    const wrong = await verifyPayment(deps, (await request(wallet, {}, { by: missingOwner })).body);
    assert.deepEqual(wrong.response, { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer: address });
  });

  test('an ERC-6492 Safe not deployed whose factory is allow-listed: valid once its deployment and the transfer simulate; verify deploys nothing', async () => {
    const { client } = parts.chains[network];
    const safe = await deploySafeContracts(client, parts.anvil.url, safeDeployer().account);
    const allowing = { ...deps, walletDeployments: { factories: [safe.factory], journal: parts.journal } };
    const owners = safeOwners();
    const creation = safeCreation(safe, owners, 7n);
    const address = await safeAddress(client, safe.factory, creation);
    await send(token, 'transfer', [address, 5000n]);
    const wallet = safeSigner(foundry.id, address, owners, { factory: safe.factory, data: creation }) as unknown as LocalAccount;
    const paid = await request(wallet, { value: 5000n });
    const { response, verified } = await verifyPayment(allowing, paid.body);
    assert.deepEqual(response, { isValid: true, payer: address });
    assert.equal(verified?.signature, paid.signature, 'settle gets the wrapper: it deploys the wallet first');
    assert.equal(await client.getCode({ address }), undefined, 'nothing deployed');
    // The same payment to the zero address: the deployment simulates, the token refuses the transfer after it.
    const nowhere = await request(wallet, { value: 5000n, to: zeroAddress });
    const refused = await verifyPayment(allowing, withRequirements(nowhere.body, { payTo: zeroAddress }));
    const { invalidMessage, ...refusal } = refused.response;
    assert.deepEqual(refusal, { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', payer: address });
    assert.match(String(invalidMessage), /^the transfer after the deployment reverts: /);
    // Not due yet: the fields are checked, nothing is simulated (the token would refuse it before validAfter).
    const later = await request(wallet, { value: 5000n, validAfter: BigInt(nowS() + 120) });
    assert.deepEqual((await verifyPayment(allowing, later.body)).response, { isValid: true, payer: address });
    // Without an owner's signature: refused by its signature, due or not (nothing simulated for it).
    const missingOwner = safeSigner(foundry.id, address, [owners[0]!, privateKeyToAccount(generatePrivateKey())].sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1)), { factory: safe.factory, data: creation }) as unknown as LocalAccount;
    for (const validAfter of [0n, BigInt(nowS() + 120)]) {
      const wrongOwner = await request(wallet, { value: 5000n, validAfter }, { by: missingOwner });
      assert.deepEqual((await verifyPayment(allowing, wrongOwner.body)).response, { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer: address });
    }
    // More than it holds: the simulated transfer fails, the balance read names why.
    const short = await verifyPayment(allowing, (await request(wallet, { value: 5001n })).body);
    assert.deepEqual(short.response, { isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the payer\'s balance is below the amount', payer: address });
    assert.equal(await client.getCode({ address }), undefined, 'still nothing deployed');

    // A node without eth_simulateV1 (as public nodes may be): nothing is simulated, the fields, the balance and the nonce are still checked.
    const onNode = async (node: { lacking?: string[]; unsupported?: string[]; failing?: string[] }, body: unknown) => {
      const proxy = await startRpcProxy(parts.anvil.url, node);
      const chains = await createChainClients(Object.fromEntries(networkNames.map((n) => [n, { network: n, url: proxy.url, managed: true }])) as never, 20);
      try {
        return (await verifyPayment({ ...allowing, chains }, body)).response;
      } finally {
        for (const n of networkNames) chains[n].receipts.close();
        await proxy.close();
      }
    };
    const simulation = { lacking: ['eth_simulateV1'] };
    assert.deepEqual(await onNode(simulation, withRequirements(nowhere.body, { payTo: zeroAddress })), { isValid: true, payer: address });
    assert.deepEqual(await onNode({ unsupported: ['eth_simulateV1'] }, withRequirements(nowhere.body, { payTo: zeroAddress })), { isValid: true, payer: address }, 'method not supported: the same');
    assert.deepEqual(await onNode(simulation, (await request(wallet, { value: 5001n })).body), {
      isValid: false, invalidReason: 'insufficient_funds', invalidMessage: 'the balance, less what the payer\'s authorizations in flight hold, is below the amount', payer: address,
    });
    // A node failing the simulation: refused as a failed simulation, with the node's error.
    const failed = await onNode({ failing: ['eth_simulateV1'] }, paid.body);
    assert.deepEqual({ ...failed, invalidMessage: undefined }, { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: undefined, payer: address });
    assert.equal(failed.invalidMessage, 'InternalRpcError: An internal error was received. (eth_simulateV1 failed)');
  });

  test('a node failing while the published verifier runs: verify answers, and nothing is left to fail later unobserved (which would end the process)', async () => {
    const from = await payer();
    const { body } = await request(from);
    // The published verifier checks that the asset is a contract in the background (eth_getCode,
    // cached 15 minutes) while it reads the payer's code: the node answers neither (a timeout) once
    // our own read of the payer's code is done.
    resetAssetContractCache();
    const { client } = deps.chains[network];
    let payerReads = 0;
    const failing = new Proxy(client, {
      get: (target, key, receiver) => (key === 'getCode'
        ? async (args: { address: Address }) => {
          if (getAddress(args.address) === token) {
            await new Promise((resolve) => setTimeout(resolve, 50));
            throw new Error('The request took too long to respond.');
          }
          if (++payerReads > 1) throw new Error('The request took too long to respond.');
          return target.getCode(args);
        }
        : Reflect.get(target, key, receiver)),
    });
    const unobserved: unknown[] = [];
    const onUnhandled = (reason: unknown) => unobserved.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      // Refused or failed: either is an answer; what must not happen is a rejection no one awaits.
      await verifyPayment({ ...deps, chains: { ...deps.chains, [network]: { ...deps.chains[network], client: failing } } }, body).catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      process.off('unhandledRejection', onUnhandled);
      resetAssetContractCache();
    }
    assert.deepEqual(unobserved.map((r) => (r as Error).message), []);
  });
});
