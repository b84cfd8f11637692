import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { resolveToken } from './token.ts';

export interface TokenInfo {
  contractAddress: string;
  tokenSymbol: string;
  decimals: number;
  network: NetworkName;
  chainId: number;
}

/** What an app puts in its QR code: the token's contract, symbol and the chain it lives on. */
export async function getTokenInfo(
  deps: Pick<WalletDeps, 'repo' | 'contracts' | 'chains'>,
  network: NetworkName,
  params: { tokenSymbol?: string; contractAddress?: string },
): Promise<TokenInfo> {
  let token = await resolveToken(deps, network, params.contractAddress);
  if (params.tokenSymbol !== undefined && params.tokenSymbol !== token.symbol) {
    const named = await deps.repo.findTokenBySymbol(network, params.tokenSymbol);
    if (!named) throw new DomainError('wallet.unknown_token', `no token ${params.tokenSymbol} on ${network}`);
    token = await resolveToken(deps, network, named.contract_address);
  }
  return { contractAddress: token.contractAddress, tokenSymbol: token.symbol, decimals: token.decimals, network, chainId: deps.chains[network].chainId };
}
