import assert from 'node:assert/strict';
import { getAddress, parseUnits, type Abi, type Address, type Hex, type PublicClient, type WalletClient } from 'viem';
import {
  bep20LikeAbi, bep20LikeBytecode, feeOnTransferTokenAbi, feeOnTransferTokenBytecode, rebasingTokenAbi, rebasingTokenBytecode,
  tetherLikeAbi, tetherLikeBytecode, usdcLikeAbi, usdcLikeBytecode,
} from './gen/test-tokens.ts';

/**
 * Tokens shaped like the real ones (contracts/test/), deployed from outside the platform by a test's
 * own account: USDT's (6 decimals, `transfer` answers nothing, no EIP-3009), USDC's (6 decimals,
 * EIP-3009 in the domain ("USD Coin", "2"), pause, blacklist), a plain BEP-20 (18 decimals), and two
 * the platform must refuse: a fee-on-transfer one and a rebasing one (index 1.1).
 */
export const shapedTokens = {
  usdt: { abi: tetherLikeAbi, bytecode: tetherLikeBytecode, decimals: 6, args: (supply: bigint) => ['Tether USD', 'USDT', supply] },
  usdc: { abi: usdcLikeAbi, bytecode: usdcLikeBytecode, decimals: 6, args: (supply: bigint) => [supply] },
  bep20: { abi: bep20LikeAbi, bytecode: bep20LikeBytecode, decimals: 18, args: (supply: bigint) => ['Binance-Peg BSC-USD', 'BSC-USD', supply] },
  fee: { abi: feeOnTransferTokenAbi, bytecode: feeOnTransferTokenBytecode, decimals: 18, args: (supply: bigint) => [supply] },
  rebasing: { abi: rebasingTokenAbi, bytecode: rebasingTokenBytecode, decimals: 18, args: (supply: bigint) => [supply, 1_100_000_000_000_000_000n] },
} as const satisfies Record<string, { abi: Abi; bytecode: Hex; decimals: number; args: (supply: bigint) => readonly unknown[] }>;

export type ShapedTokenKind = keyof typeof shapedTokens;

/** Deploys a `kind` token by `deployer` (the wallet client's account) with a million tokens of its own; answers its address. */
export async function deployShapedToken(publicClient: PublicClient, deployer: WalletClient, kind: ShapedTokenKind): Promise<Address> {
  const shape = shapedTokens[kind];
  const hash = await deployer.deployContract({
    abi: shape.abi as Abi, bytecode: shape.bytecode, args: shape.args(parseUnits('1000000', shape.decimals)), account: deployer.account!, chain: deployer.chain,
  });
  const receipt = await publicClient.waitForTransactionReceipt({ hash });
  assert.equal(receipt.status, 'success');
  assert.ok(receipt.contractAddress);
  return getAddress(receipt.contractAddress);
}
