import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { concat, createWalletClient, getAddress, http, parseUnits, serializeErc6492Signature, zeroAddress, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { vixpTokenAbi, vixpTokenBytecode } from '../gen/contracts/vixp-token.ts';
import { vixpName, type PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import { openStore, type Store } from '../store/db.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { networkNames } from '#shared/networks.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { devAccount, startChainParts, type ChainParts } from '../../test/support/chain-parts.ts';
import { deploySafeContracts, safeAddress, safeCreation, safeDeployer, safeOwners, safeSigner, type SafeContracts } from '../../test/support/safe-wallets.ts';
import type { ExactAuthorization } from './parse-request.ts';
import { erc6492Deployment, factoryAllowed, settlementSignature, signedByPayerKey, walletSignature, type AuthorizationDomain } from './contract-signature.ts';

// Smart-wallet payers' signatures (docs/x402.md#smart-wallet-payers) on a real anvil with Safe 1.5.0's
// published contracts (test/support/safe-wallets.ts): what verify checks and settle sends for a plain
// account, a deployed Safe (ERC-1271), and ERC-6492 wrappers of deployed and not-yet-deployed Safes.
// The wallet's own answer (its `isValidSignature`) is read through viem's verifyTypedData, as verify
// asks it; the refusals are the ones POST /x402/verify answers.

const owner = devAccount(0);
const network = networkNames.find(() => true)!;
const payTo = getAddress(devAccount(3).address);

let parts: ChainParts;
let store: Store;
let dataDir: string;
let safe: SafeContracts;
/** VIXP's address in the platform's contracts (its domain known without a chain read). */
let vixp: Address;
/** A token on the operator's allow-list, deployed: its domain is read from the chain. */
let listed: Address;
/** An allow-listed token with no contract at its address: its domain cannot be read. */
const missing = getAddress(`0x${'5a'.repeat(20)}`);
/** A deployed token not on the allow-list (taken off since, say). */
let unlisted: Address;
let deps: Parameters<typeof settlementSignature>[0];

const client = () => parts.chains[network].client;

async function deployToken(name: string, symbol: string): Promise<Address> {
  const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
  const hash = await wallet.deployContract({ abi: vixpTokenAbi, bytecode: vixpTokenBytecode, args: [name, symbol, owner.address, parseUnits('1000000', 18)] });
  return getAddress((await client().waitForTransactionReceipt({ hash })).contractAddress!);
}

before(async () => {
  parts = await startChainParts({ managed: true });
  dataDir = mkdtempSync(path.join(tmpdir(), 'vixpay-contract-signature-'));
  store = await openStore({ dataDir });
  safe = await deploySafeContracts(client(), parts.anvil.url, safeDeployer().account);
  vixp = await deployToken(vixpName, 'VIXP');
  listed = await deployToken('Other Dollar', 'ODL');
  unlisted = await deployToken('Gone Dollar', 'GDL');
  const settlementTokens = createSettlementTokenRepository(store.db);
  await settlementTokens.allow({ network, contractAddress: listed, symbol: 'ODL', allowedAt: 1 });
  await settlementTokens.allow({ network, contractAddress: missing, symbol: 'MSG', allowedAt: 1 });
  const contracts = Object.fromEntries(networkNames.map((n) => [n, { vixpToken: vixp }])) as unknown as PlatformContractsByNetwork;
  deps = { chains: parts.chains, contracts, settlementTokens };
});
after(async () => {
  await store?.close();
  await parts?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const domainOf = (token: Address, name: string): AuthorizationDomain => ({ name, version: '1', chainId: foundry.id, verifyingContract: token });

function authorizationOf(from: Address): ExactAuthorization {
  return { from, to: payTo, value: 1000n, validAfter: 0n, validBefore: BigInt(Math.floor(Date.now() / 1000) + 600), nonce: `0x${randomBytes(32).toString('hex')}` };
}

/** `signer`'s signature of `authorization` in `domain` (an account's key, or a Safe's owners). */
async function sign(signer: Pick<LocalAccount, 'signTypedData'>, domain: AuthorizationDomain, authorization: ExactAuthorization): Promise<Hex> {
  return signer.signTypedData!({ domain, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: { ...authorization } });
}

/** What the wallet at `address` answers for `signature` (ERC-1271, or ERC-6492's deployless check), as verify asks it. */
function walletAccepts(address: Address, domain: AuthorizationDomain, authorization: ExactAuthorization, signature: Hex): Promise<boolean> {
  return client().verifyTypedData({ address, signature, domain, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: { ...authorization } });
}

/** A new Safe of two owners: its creation call with `factory`, its address; deployed when asked. */
async function newSafe(deployed: boolean, factory = safe.factory) {
  const owners = safeOwners();
  const creation = safeCreation(safe, owners, BigInt(`0x${randomBytes(8).toString('hex')}`));
  const address = await safeAddress(client(), factory, creation);
  if (deployed) {
    const wallet = createWalletClient({ account: owner, chain: foundry, transport: http(parts.anvil.url) });
    assert.equal((await client().waitForTransactionReceipt({ hash: await wallet.sendTransaction({ to: factory, data: creation }) })).status, 'success');
  }
  return { address, owners, creation };
}

/** The two owners' signature as a Safe of `owners` at `address` signs (`wrap`: in an ERC-6492 wrapper). */
const safeSignature = (address: Address, owners: readonly PrivateKeyAccount[], domain: AuthorizationDomain, authorization: ExactAuthorization, wrap?: { factory: Address; data: Hex }) =>
  sign(safeSigner(foundry.id, address, owners, wrap) as unknown as LocalAccount, domain, authorization);

/** An owner and a stranger sign: a Safe of two owners says no. */
const withStranger = (owners: readonly PrivateKeyAccount[]) => [owners[0]!, privateKeyToAccount(generatePrivateKey())]
  .sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));

const undeployedMessage = (from: Address, factory: string) =>
  `the wallet ${from} is not deployed (an ERC-6492 signature) and its factory ${factory} is not one this facilitator deploys with: deploy it, then pay`;

describe('a plain account', () => {
  test('its signature passes through unchanged, is the payer key\'s and rides the batch', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const authorization = authorizationOf(payer.address);
    const signature = await sign(payer, domainOf(vixp, vixpName), authorization);
    assert.deepEqual(await walletSignature(client(), payer.address, signature, [safe.factory]), { ok: true, signature });
    assert.equal(await signedByPayerKey(domainOf(vixp, vixpName), authorization, signature), true);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, signature), { signature, alone: false });
    // An allow-listed token's domain, read from its contract (eip712Domain): the same.
    const other = await sign(payer, domainOf(listed, 'Other Dollar'), authorization);
    assert.deepEqual(await settlementSignature(deps, network, authorization, listed, other), { signature: other, alone: false });
  });

  test('another key\'s signature, one over other terms or another domain, or one that does not recover is not the payer key\'s: sent alone', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const authorization = authorizationOf(payer.address);
    const domain = domainOf(vixp, vixpName);
    const stranger = await sign(privateKeyToAccount(generatePrivateKey()), domain, authorization);
    assert.equal(await signedByPayerKey(domain, authorization, stranger), false);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, stranger), { signature: stranger, alone: true });
    const otherValue = await sign(payer, domain, { ...authorization, value: 1001n });
    assert.equal(await signedByPayerKey(domain, authorization, otherValue), false);
    const otherDomain = await sign(payer, { ...domain, name: 'Other Dollar' }, authorization);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, otherDomain), { signature: otherDomain, alone: true });
    // 65 bytes that recover nothing (r = 0; v = 0xff): false, not thrown.
    for (const garbage of [`0x${'00'.repeat(64)}1b`, `0x${'ff'.repeat(65)}`] as const) {
      assert.equal(await signedByPayerKey(domain, authorization, garbage), false);
      assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, garbage), { signature: garbage, alone: true });
    }
  });

  test('without the token\'s domain (not VIXP and not allow-listed, or its contract unreadable) even the payer key\'s signature is sent alone', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const authorization = authorizationOf(payer.address);
    const gone = await sign(payer, domainOf(unlisted, 'Gone Dollar'), authorization);
    assert.equal(await signedByPayerKey(domainOf(unlisted, 'Gone Dollar'), authorization, gone), true);
    assert.deepEqual(await settlementSignature(deps, network, authorization, unlisted, gone), { signature: gone, alone: true });
    const unreadable = await sign(payer, domainOf(missing, 'Missing Dollar'), authorization);
    assert.deepEqual(await settlementSignature(deps, network, authorization, missing, unreadable), { signature: unreadable, alone: true });
  });
});

describe('a deployed Safe (ERC-1271)', () => {
  test('its owners\' signature passes through unchanged, is accepted by the wallet and is sent alone; one missing an owner passes through for the wallet to refuse', async () => {
    const { address, owners } = await newSafe(true);
    const domain = domainOf(vixp, vixpName);
    const authorization = authorizationOf(address);
    const signature = await safeSignature(address, owners, domain, authorization);
    assert.equal((signature.length - 2) / 2, 130, 'two owners\' signatures');
    assert.deepEqual(await walletSignature(client(), address, signature, []), { ok: true, signature });
    assert.equal(await walletAccepts(address, domain, authorization, signature), true);
    assert.equal(await signedByPayerKey(domain, authorization, signature), false);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, signature), { signature, alone: true });

    // An owner and a stranger: not this module's to judge (verify asks the wallet, which says no: invalid_exact_evm_signature).
    const wrong = await safeSignature(address, withStranger(owners), domain, authorization);
    assert.deepEqual(await walletSignature(client(), address, wrong, []), { ok: true, signature: wrong });
    assert.equal(await walletAccepts(address, domain, authorization, wrong), false);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, wrong), { signature: wrong, alone: true });
    // One owner's 65 bytes: recovers to the owner, not to the wallet.
    const one = await sign(owners[0]!, domain, authorization);
    assert.equal(await signedByPayerKey(domain, authorization, one), false);
  });

  test('its ERC-6492 wrapper is answered as its inner signature, whatever the factory (none allow-listed): no deployment', async () => {
    const { address, owners, creation } = await newSafe(true);
    const domain = domainOf(vixp, vixpName);
    const authorization = authorizationOf(address);
    const inner = await safeSignature(address, owners, domain, authorization);
    const wrapped = await safeSignature(address, owners, domain, authorization, { factory: safe.factory, data: creation });
    assert.notEqual(wrapped, inner);
    assert.deepEqual(erc6492Deployment(wrapped), { factory: safe.factory, factoryCalldata: creation });
    assert.deepEqual(await walletSignature(client(), address, wrapped, []), { ok: true, signature: inner });
    assert.equal(await walletAccepts(address, domain, authorization, inner), true);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, wrapped), { signature: inner, alone: true });
    // A plain account's signature in a wrapper: settle sends the inner 65 bytes, in the batch.
    const payer = privateKeyToAccount(generatePrivateKey());
    const plain = authorizationOf(payer.address);
    const signed = await sign(payer, domain, plain);
    const wrappedPlain = serializeErc6492Signature({ address: safe.factory, data: creation, signature: signed });
    assert.deepEqual(await settlementSignature(deps, network, plain, vixp, wrappedPlain), { signature: signed, alone: false });
  });
});

describe('an ERC-6492 wrapper of a Safe not deployed', () => {
  test('with an allow-listed factory: accepted with its inner signature and the deployment settle sends first; verify deploys nothing', async () => {
    const { address, owners, creation } = await newSafe(false);
    const domain = domainOf(vixp, vixpName);
    const authorization = authorizationOf(address);
    const wrapped = await safeSignature(address, owners, domain, authorization, { factory: safe.factory, data: creation });
    const inner = await safeSignature(address, owners, domain, authorization);
    // The allow-list as the operator wrote it (lower case): the same factory.
    const factories = [safe.otherFactory, safe.factory.toLowerCase() as Address];
    assert.equal(factoryAllowed(factories, safe.factory), true);
    assert.deepEqual(await walletSignature(client(), address, wrapped, factories), {
      ok: true, signature: inner, deployment: { factory: safe.factory, factoryCalldata: creation },
    });
    // The wrapper is the wallet's (its factory call, then its isValidSignature, in one deployless call), and nothing was deployed.
    assert.equal(await walletAccepts(address, domain, authorization, wrapped), true);
    assert.equal(await client().getCode({ address }), undefined);
    assert.deepEqual(await settlementSignature(deps, network, authorization, vixp, wrapped), { signature: inner, alone: true });
  });

  test('with a factory not allow-listed, or none allow-listed: refused eip6492_factory_not_allowed with why', async () => {
    const { address, owners, creation } = await newSafe(false);
    const domain = domainOf(vixp, vixpName);
    const authorization = authorizationOf(address);
    const wrapped = await safeSignature(address, owners, domain, authorization, { factory: safe.factory, data: creation });
    assert.equal(factoryAllowed([safe.otherFactory], safe.factory), false);
    assert.equal(factoryAllowed([], safe.factory), false);
    assert.deepEqual(await walletSignature(client(), address, wrapped, [safe.otherFactory]), {
      ok: false, reason: 'eip6492_factory_not_allowed', message: undeployedMessage(address, safe.factory),
    });
    assert.deepEqual(await walletSignature(client(), address, wrapped, []), {
      ok: false, reason: 'eip6492_factory_not_allowed',
      message: `the wallet ${address} is not deployed (an ERC-6492 signature) and this facilitator deploys none (no factory allow-listed): deploy it, then pay`,
    });
    assert.equal(await client().getCode({ address }), undefined);
  });

  test('a wrapper naming no deployment (the zero address, or an empty call) is refused, whatever factory is allow-listed', async () => {
    const { address, owners } = await newSafe(false);
    const domain = domainOf(vixp, vixpName);
    const authorization = authorizationOf(address);
    const inner = await safeSignature(address, owners, domain, authorization);
    const noFactory = serializeErc6492Signature({ address: zeroAddress, data: '0xabcdef', signature: inner });
    const noCall = serializeErc6492Signature({ address: safe.factory, data: '0x', signature: inner });
    for (const wrapped of [noFactory, noCall]) {
      assert.equal(erc6492Deployment(wrapped), undefined);
      assert.deepEqual(await walletSignature(client(), address, wrapped, [safe.factory, zeroAddress]), {
        ok: false, reason: 'eip6492_factory_not_allowed', message: undeployedMessage(address, '(none)'),
      });
    }
  });
});

describe('erc6492Deployment', () => {
  test('a signature that is no wrapper names no deployment', async () => {
    const payer = privateKeyToAccount(generatePrivateKey());
    const signature = await sign(payer, domainOf(vixp, vixpName), authorizationOf(payer.address));
    assert.equal(erc6492Deployment(signature), undefined);
    assert.equal(erc6492Deployment(concat([signature, signature])), undefined);
  });
});

describe('a malformed ERC-6492 wrapper', () => {
  const magic = '0x6492649264926492649264926492649264926492649264926492649264926492';
  test('(the suffix alone, too short, offsets out of range) is refused as no signature of the payer\'s, never thrown; nothing asked of the chain', async () => {
    const from = privateKeyToAccount(generatePrivateKey()).address;
    const notAsked = { getCode: () => Promise.reject(new Error('the chain was asked')) } as unknown as Parameters<typeof walletSignature>[0];
    for (const malformed of [magic, concat(['0xdeadbeef', magic]), concat([`0x${'ff'.repeat(128)}`, magic])] as Hex[]) {
      for (const [clientOf, factories] of [[notAsked, []], [client(), [safe.factory]]] as const) {
        assert.deepEqual(await walletSignature(clientOf, from, malformed, factories), {
          ok: false, reason: 'invalid_exact_evm_signature',
          message: 'the signature ends with the ERC-6492 suffix but is not a wrapper (an ABI-encoded factory, factory call and signature)',
        });
      }
    }
  });
});
