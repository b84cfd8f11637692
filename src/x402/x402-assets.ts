import { getAddress, isAddress, parseAbi, type Address } from 'viem';
import { vixpDecimals, vixpName, vixpSymbol } from '../chain/platform-contracts.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';

/** A token the facilitator settles on a network, with the EIP-712 domain its authorizations are signed in. */
export interface X402Asset {
  address: Address;
  symbol: string;
  decimals: number;
  /** EIP-712 domain name and version: what `extra` of the payment requirements must say. */
  name: string;
  version: string;
}

const domainAbi = parseAbi([
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'function name() view returns (string)',
  'function decimals() view returns (uint8)',
]);

/** The domain names and decimals read from the chain, per network and token (they never change for a deployed token). */
const domains = new Map<string, Promise<{ name: string; decimals: number }>>();

/**
 * The token `asset` on `network` if the facilitator settles it: VIXP, or an EIP-3009 token of the
 * operator's allow-list (`vixpay token allow`, e.g. USDC). Its EIP-712 version is the one the
 * allow-list recorded (settlement_tokens.eip712_version); its name comes from its ERC-5267
 * `eip712Domain()`, else `name()`.
 */
export async function acceptedAsset(deps: Pick<X402Deps, 'chains' | 'contracts' | 'settlementTokens'>, network: NetworkName, asset: string): Promise<X402Asset | undefined> {
  if (!isAddress(asset, { strict: false })) return undefined;
  const address = getAddress(asset);
  if (address === deps.contracts[network].vixpToken) {
    return { address, symbol: vixpSymbol, decimals: vixpDecimals, name: vixpName, version: '1' };
  }
  const listed = await deps.settlementTokens.find(network, address);
  // The exact scheme is an EIP-3009 authorization: a token without it (the account path: custodial
  // accounts only) has no authorization an outside payer could sign.
  if (!listed || listed.transferPath === 'account' || listed.eip712Version === null) return undefined;
  const domain = await domainOf(deps, network, address);
  // The version `token allow` proved by executing an authorization under it (USDC's "2", read from
  // version() where the token has no eip712Domain()), not a guess.
  return { address, symbol: listed.symbol, decimals: domain.decimals, name: domain.name, version: listed.eip712Version };
}

/** Every asset settled on `network`: VIXP first, then the allow-list's. */
export async function acceptedAssets(deps: Pick<X402Deps, 'chains' | 'contracts' | 'settlementTokens'>, network: NetworkName): Promise<X402Asset[]> {
  const listed = await deps.settlementTokens.list(network);
  const assets = await Promise.all([deps.contracts[network].vixpToken, ...listed.map((t) => t.contractAddress)]
    .map((address) => acceptedAsset(deps, network, address).catch(() => undefined)));
  return assets.filter((asset): asset is X402Asset => asset !== undefined);
}

function domainOf(deps: Pick<X402Deps, 'chains'>, network: NetworkName, address: Address) {
  const key = `${network}:${address}`;
  let domain = domains.get(key);
  if (!domain) {
    const { client } = deps.chains[network];
    domain = (async () => {
      const decimals = await client.readContract({ address, abi: domainAbi, functionName: 'decimals' });
      const eip712 = await client.readContract({ address, abi: domainAbi, functionName: 'eip712Domain' }).catch(() => undefined);
      if (eip712) return { name: eip712[1], decimals };
      return { name: await client.readContract({ address, abi: domainAbi, functionName: 'name' }), decimals };
    })();
    domains.set(key, domain);
    domain.catch(() => domains.delete(key));
  }
  return domain;
}
