import { getAddress, isAddress, type Address } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { NetworkName } from '#shared/networks.ts';
import { vixpDecimals, vixpName, vixpSymbol } from '../chain/platform-contracts.ts';
import type { WalletDeps } from './wallet-deps.ts';

export interface ResolvedToken {
  contractAddress: Address;
  symbol: string;
  name: string;
  decimals: number;
}

/** The token a call names by `contractAddress` on this network; VIXP when none is named. */
export async function resolveToken(
  deps: Pick<WalletDeps, 'repo' | 'contracts'>,
  network: NetworkName,
  contractAddress?: string,
): Promise<ResolvedToken> {
  const vixp = deps.contracts[network].vixpToken;
  if (contractAddress === undefined || (isAddress(contractAddress) && getAddress(contractAddress) === vixp)) {
    return { contractAddress: vixp, symbol: vixpSymbol, name: vixpName, decimals: vixpDecimals };
  }
  if (!isAddress(contractAddress)) throw new DomainError('request.invalid', 'contractAddress is not a valid address', { details: 'contractAddress' });
  const token = await deps.repo.findToken(network, getAddress(contractAddress));
  if (!token) throw new DomainError('wallet.unknown_token', `no token of ours at ${contractAddress} on ${network}`);
  return { contractAddress: getAddress(token.contract_address), symbol: token.symbol, name: token.name, decimals: token.decimals };
}
