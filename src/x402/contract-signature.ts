import { getAddress, isAddressEqual, isErc6492Signature, parseErc6492Signature, recoverTypedDataAddress, size, zeroAddress, type Address, type Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import type { ChainClient } from '../chain/chain-clients.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import type { X402Deps } from './x402-deps.ts';
import type { ExactAuthorization } from './parse-request.ts';
import { acceptedAsset } from './x402-assets.ts';

/**
 * Smart-wallet payers (docs/x402.md#smart-wallet-payers, docs/decisions/x402.md#smart-wallet-payers-issue-30).
 * A plain account signs with its key: 65 bytes that recover to `from`, carried in the compact
 * settlement batch. Any other signature is a contract account's, asked on chain (ERC-1271
 * `isValidSignature` of a deployed `from`, which the token's `transferWithAuthorization(…, bytes
 * signature)` asks too) and sent alone in that form. ERC-6492 (a wallet not deployed yet) is settled
 * when its factory is allow-listed (`X402_EIP6492_FACTORIES`): the platform sends the factory's call
 * first (deploy-wallet.ts), then the transfer with the inner signature; refused otherwise.
 */

/** The published reason for an ERC-6492 signature of a wallet not deployed whose factory is not allow-listed (`@x402/evm`'s). */
export const undeployedWalletReason = 'eip6492_factory_not_allowed';

/** What an ERC-6492 wrapper carries to deploy its wallet: the factory and the call to it. */
export interface WalletDeployment {
  factory: Address;
  factoryCalldata: Hex;
}

/**
 * The deployment an ERC-6492 wrapper names; undefined for any other signature, or a wrapper whose
 * factory is the zero address or whose call is empty (as `@x402/evm`'s `classifyErc6492Payer`).
 */
export function erc6492Deployment(signature: Hex): WalletDeployment | undefined {
  if (!isErc6492Signature(signature)) return undefined;
  // A wrapper decodes to its three parts (or throws: a malformed one, which walletSignature refuses first).
  const { address, data } = parseErc6492Signature(signature) as { address: Address; data: Hex };
  if (data === '0x' || isAddressEqual(address, zeroAddress)) return undefined;
  return { factory: getAddress(address), factoryCalldata: data };
}

/** Whether `factory` is one of the operator's (`X402_EIP6492_FACTORIES`). */
export const factoryAllowed = (factories: readonly Address[], factory: Address) => factories.some((allowed) => isAddressEqual(allowed, factory));

export type WalletSignature =
  | { ok: true; signature: Hex; deployment?: WalletDeployment }
  | { ok: false; reason: string; message: string };

/**
 * The signature to check and send for `from`: as signed, or the inner signature of an ERC-6492
 * wrapper, with its `deployment` when the wallet is not deployed yet and the wrapper's factory is
 * among `factories` (settle sends that call first). The wrapper of a wallet not deployed is refused
 * otherwise: the platform would have to send an unknown factory's call. A signature ending with the
 * ERC-6492 suffix whose parts do not decode is refused as no signature of the payer's
 * (`invalid_exact_evm_signature`), not thrown.
 */
export async function walletSignature(
  client: Pick<ChainClient['client'], 'getCode'>, from: Address, signature: Hex, factories: readonly Address[],
): Promise<WalletSignature> {
  if (!isErc6492Signature(signature)) return { ok: true, signature };
  let inner: Hex;
  try {
    inner = parseErc6492Signature(signature).signature;
  } catch {
    // Its parts do not decode: no signature of the payer's (never a thrown decoding error, a 500).
    return { ok: false, reason: 'invalid_exact_evm_signature', message: 'the signature ends with the ERC-6492 suffix but is not a wrapper (an ABI-encoded factory, factory call and signature)' };
  }
  // viem answers undefined for an address without code (never '0x').
  const code = await client.getCode({ address: from });
  if (code !== undefined) return { ok: true, signature: inner };
  const deployment = erc6492Deployment(signature);
  if (deployment && factoryAllowed(factories, deployment.factory)) return { ok: true, signature: inner, deployment };
  return {
    ok: false, reason: undeployedWalletReason,
    message: factories.length === 0
      ? `the wallet ${from} is not deployed (an ERC-6492 signature) and this facilitator deploys none (no factory allow-listed): deploy it, then pay`
      : `the wallet ${from} is not deployed (an ERC-6492 signature) and its factory ${deployment?.factory ?? '(none)'} is not one this facilitator deploys with: deploy it, then pay`,
  };
}

/** An EIP-3009 authorization's EIP-712 domain: the token's name and version, the chain, the token. */
export interface AuthorizationDomain {
  name: string;
  version: string;
  chainId: number;
  verifyingContract: Address;
}

/**
 * Whether `signature` is a plain account's: 65 bytes whose ECDSA recovery over the authorization in
 * `domain` is `from`. Such an item rides the compact settlement batch; any other goes alone.
 */
export async function signedByPayerKey(domain: AuthorizationDomain, authorization: ExactAuthorization, signature: Hex): Promise<boolean> {
  if (size(signature) !== 65) return false;
  try {
    const signer = await recoverTypedDataAddress({
      domain, types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization', message: { ...authorization }, signature,
    });
    return isAddressEqual(signer, authorization.from);
  } catch {
    return false;
  }
}

/**
 * How an accepted settlement's signature is sent: `alone` (the token's bytes form, never in a
 * batch) unless it is a plain account's. Without the token's domain (a token taken off the
 * allow-list since), alone: the bytes form takes a plain account's signature too.
 */
export async function settlementSignature(
  deps: Pick<X402Deps, 'chains' | 'contracts' | 'settlementTokens'>, network: NetworkName, authorization: ExactAuthorization, asset: Address, signed: Hex,
): Promise<{ signature: Hex; alone: boolean }> {
  // The wallet's own signature: an ERC-6492 wrapper's inner one (viem answers any other signature as it is).
  const signature = parseErc6492Signature(signed).signature;
  const token = await acceptedAsset(deps, network, asset).catch(() => undefined);
  if (!token) return { signature, alone: true };
  const domain = { name: token.name, version: token.version, chainId: deps.chains[network].chainId, verifyingContract: getAddress(asset) };
  return { signature, alone: !(await signedByPayerKey(domain, authorization, signature)) };
}
