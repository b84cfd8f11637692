import assert from 'node:assert/strict';
import {
  BaseError, ContractFunctionRevertedError, createPublicClient, createWalletClient, getAddress, getContract, http, parseSignature, parseUnits,
  type Abi, type Address, type Hex,
} from 'viem';
import { mnemonicToAccount, type HDAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { vixpTokenAbi, vixpTokenBytecode } from '../../src/gen/contracts/vixp-token.ts';
import { ethrDidRegistryAbi, ethrDidRegistryBytecode } from '../../src/gen/contracts/ethr-did-registry.ts';

// The contract tests' chain (src/chain/contracts.test.ts, src/chain/eip3009-contract.test.ts).

// anvil's funded dev accounts; `relayer` submits what `holder` signs.
const devMnemonic = 'test test test test test test test test test test test junk';
export const [owner, holder, relayer, payee, stranger] = [0, 1, 2, 3, 4].map((addressIndex) =>
  mnemonicToAccount(devMnemonic, { addressIndex }),
) as [HDAccount, HDAccount, HDAccount, HDAccount, HDAccount];

export const tokenName = 'VIXP Token';
export const initialSupply = parseUnits('1000000', 18);
export const holderFunds = parseUnits('1000', 18);

/** Clients on the anvil at `url`, with VixpToken and EthereumDIDRegistry deployed by `owner`. */
export async function deployContracts(url: string) {
  const publicClient = createPublicClient({ chain: foundry, transport: http(url) });
  const walletOf = (account: HDAccount) => createWalletClient({ account, chain: foundry, transport: http(url) });

  const mined = async (hash: Promise<Hex>) => {
    const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash });
    assert.equal(receipt.status, 'success');
    return receipt;
  };
  const deploy = async (abi: Abi, bytecode: Hex, args: readonly unknown[]) => {
    const { contractAddress } = await mined(walletOf(owner).deployContract({ abi, bytecode, args }));
    assert.ok(contractAddress);
    return getAddress(contractAddress);
  };

  const tokenAddress = await deploy(vixpTokenAbi, vixpTokenBytecode, [tokenName, 'VIXP', owner.address, initialSupply]);
  const registryAddress = await deploy(ethrDidRegistryAbi, ethrDidRegistryBytecode, []);
  /** The token as seen by `account` (reads, simulations and writes from that account). */
  const tokenAs = (account: HDAccount) =>
    getContract({ address: tokenAddress, abi: vixpTokenAbi, client: { public: publicClient, wallet: walletOf(account) } });
  const registryAs = (account: HDAccount) =>
    getContract({ address: registryAddress, abi: ethrDidRegistryAbi, client: { public: publicClient, wallet: walletOf(account) } });

  await mined(tokenAs(owner).write.transfer([holder.address, holderFunds]));
  return { url, publicClient, mined, tokenAs, registryAs, token: tokenAs(stranger), tokenAddress, registryAddress };
}

export type ContractsChain = Awaited<ReturnType<typeof deployContracts>>;

/** The token's EIP-712 domain. */
export function tokenDomain(verifyingContract: Address) {
  return { name: tokenName, version: '1', chainId: foundry.id, verifyingContract } as const;
}

export function splitSignature(signature: Hex): { v: number; r: Hex; s: Hex } {
  const { r, s, yParity } = parseSignature(signature);
  return { v: yParity + 27, r, s };
}

/** Asserts that `call` reverts with the custom error `errorName`, or with the require message `reason`. */
export async function assertReverts(call: Promise<unknown>, errorName: string | undefined, reason?: string): Promise<void> {
  await assert.rejects(call, (error: unknown) => {
    assert.ok(error instanceof BaseError, String(error));
    const revert = error.walk((e) => e instanceof ContractFunctionRevertedError);
    assert.ok(revert instanceof ContractFunctionRevertedError, `not a revert: ${error.shortMessage}`);
    if (errorName) assert.equal(revert.data?.errorName, errorName);
    if (reason) assert.equal(revert.reason, reason);
    return true;
  });
}
