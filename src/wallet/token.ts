import { getAddress, isAddress, type Address } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { NetworkName } from '#shared/networks.ts';
import { vixpDecimals, vixpName, vixpSymbol } from '../chain/platform-contracts.ts';
import type { WalletDeps } from './wallet-deps.ts';

export interface ResolvedToken {
  contractAddress: Address;
  symbol: string;
  /** Its EIP-712 domain is (name, version): "1" for VIXP and the tokens deployed through the platform. */
  name: string;
  version: string;
  decimals: number;
  /**
   * It has EIP-3009 in its (name, version) domain: VIXP, the tokens deployed through the platform, an
   * allowed USDC; not USDT or the BEP-20 pegs. How a custodial account moves it is transfer-path.ts's.
   */
  eip3009: boolean;
}

/**
 * The token a call names by `contractAddress` on this network; VIXP when none is named. Besides the
 * platform's own tokens, one the operator allowed (`vixpay token allow`), in its own decimals, with
 * EIP-3009 in its own domain or without it.
 */
export async function resolveToken(
  deps: Pick<WalletDeps, 'repo' | 'contracts'>,
  network: NetworkName,
  contractAddress?: string,
): Promise<ResolvedToken> {
  const vixp = deps.contracts[network].vixpToken;
  if (contractAddress === undefined || (isAddress(contractAddress) && getAddress(contractAddress) === vixp)) {
    return { contractAddress: vixp, symbol: vixpSymbol, name: vixpName, version: '1', decimals: vixpDecimals, eip3009: true };
  }
  if (!isAddress(contractAddress)) throw new DomainError('request.invalid', 'contractAddress is not a valid address', { details: 'contractAddress' });
  const token = await deps.repo.findToken(network, getAddress(contractAddress));
  if (token) return { contractAddress: getAddress(token.contract_address), symbol: token.symbol, name: token.name, version: '1', decimals: token.decimals, eip3009: true };
  const allowed = await deps.repo.findAllowedEip3009Token(network, getAddress(contractAddress));
  if (allowed) return { contractAddress: getAddress(contractAddress), ...allowed, eip3009: true };
  const onAccountPath = await deps.repo.findAllowedAccountToken(network, getAddress(contractAddress));
  if (!onAccountPath) throw new DomainError('wallet.unknown_token', `no token of ours at ${contractAddress} on ${network}`);
  return { contractAddress: getAddress(contractAddress), ...onAccountPath, version: '1', eip3009: false };
}
