import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import {
  concat, createTestClient, createWalletClient, encodeFunctionData, getAddress, getContractAddress, hashTypedData, http, parseEther,
  serializeErc6492Signature, zeroAddress, type Abi, type Address, type Chain, type Hex, type PublicClient, type TypedDataDefinition,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { ClientEvmSigner } from '@x402/evm';

// Safe 1.5.0 (`@safe-global/safe-smart-account`, its published artifacts: singleton, proxy factory,
// CompatibilityFallbackHandler for ERC-1271) for the smart-wallet payers' tests (docs/x402.md#smart-wallet-payers).

const artifacts = (path: string) => JSON.parse(readFileSync(createRequire(import.meta.url).resolve(`@safe-global/safe-smart-account/build/artifacts/contracts/${path}`), 'utf8')) as { abi: Abi; bytecode: Hex };
const safeArtifact = artifacts('Safe.sol/Safe.json');
const factoryArtifact = artifacts('proxies/SafeProxyFactory.sol/SafeProxyFactory.json');
const handlerArtifact = artifacts('handler/CompatibilityFallbackHandler.sol/CompatibilityFallbackHandler.json');

/** The Safe contracts on a chain: `factory` first of two SafeProxyFactory deployments, `otherFactory` the second. */
export interface SafeContracts { singleton: Address; factory: Address; handler: Address; otherFactory: Address }

/**
 * A deployer of its own (not a relayer lane) for the Safe contracts, and where its SafeProxyFactory
 * will be (its nonce 1) before anything is deployed: what a platform can allow-list at start.
 */
export function safeDeployer(): { account: PrivateKeyAccount; factory: Address } {
  const account = privateKeyToAccount(generatePrivateKey());
  return { account, factory: getContractAddress({ from: account.address, nonce: 1n }) };
}

/** Deploys the singleton, the factory, the handler and another factory with `deployer`, funded on the anvil at `url`. */
export async function deploySafeContracts(client: PublicClient, url: string, deployer: PrivateKeyAccount): Promise<SafeContracts> {
  await createTestClient({ mode: 'anvil', transport: http(url) }).setBalance({ address: deployer.address, value: parseEther('10') });
  const chain: Chain | undefined = client.chain;
  assert.ok(chain);
  const wallet = createWalletClient({ account: deployer, chain, transport: http(url) });
  const deploy = async ({ abi, bytecode }: { abi: Abi; bytecode: Hex }) => {
    const receipt = await client.waitForTransactionReceipt({ hash: await wallet.deployContract({ abi, bytecode }) });
    assert.ok(receipt.contractAddress);
    return getAddress(receipt.contractAddress);
  };
  return { singleton: await deploy(safeArtifact), factory: await deploy(factoryArtifact), handler: await deploy(handlerArtifact), otherFactory: await deploy(factoryArtifact) };
}

/** Two owners, in ascending address order (as Safe wants their signatures). */
export const safeOwners = () => [privateKeyToAccount(generatePrivateKey()), privateKeyToAccount(generatePrivateKey())]
  .sort((a, b) => (BigInt(a.address) < BigInt(b.address) ? -1 : 1));

/** The factory call that makes a Safe of `owners`, threshold 2, with the ERC-1271 fallback handler. */
export function safeCreation(safe: SafeContracts, owners: readonly PrivateKeyAccount[], saltNonce: bigint): Hex {
  const initializer = encodeFunctionData({
    abi: safeArtifact.abi, functionName: 'setup',
    args: [owners.map((o) => o.address), 2n, zeroAddress, '0x', safe.handler, zeroAddress, 0n, zeroAddress],
  });
  return encodeFunctionData({ abi: factoryArtifact.abi, functionName: 'createProxyWithNonce', args: [safe.singleton, initializer, saltNonce] });
}

/** The address of the Safe `creation` makes with `factory`, before it is made. */
export async function safeAddress(client: PublicClient, factory: Address, creation: Hex): Promise<Address> {
  const { data } = await client.call({ to: factory, data: creation });
  return getAddress(`0x${(data as Hex).slice(-40)}`);
}

/**
 * What a Safe's owners sign for it (ERC-1271 through CompatibilityFallbackHandler): each `signers`'
 * signature of the SafeMessage over the typed data's hash, in the Safe's EIP-712 domain; `wrap`: as
 * ERC-6492 (factory and its call before the signature).
 */
export function safeSigner(chainId: number, address: Address, signers: readonly PrivateKeyAccount[], wrap?: { factory: Address; data: Hex }): ClientEvmSigner {
  return {
    address,
    async signTypedData(typedData) {
      const hash = hashTypedData(typedData as TypedDataDefinition);
      const signatures = await Promise.all(signers.map((owner) => owner.signTypedData({
        domain: { chainId, verifyingContract: address }, types: { SafeMessage: [{ name: 'message', type: 'bytes' }] }, primaryType: 'SafeMessage', message: { message: hash },
      })));
      const signature = concat(signatures);
      return wrap ? serializeErc6492Signature({ address: wrap.factory, data: wrap.data, signature }) : signature;
    },
  };
}
