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
   * How custodial accounts move it: `eip3009` (an authorization the relayer settles: VIXP, the tokens
   * deployed through the platform, USDC) or `account` (no EIP-3009: the account's own signed transfer
   * through the account contract it delegates to by EIP-7702; `name` and `version` are then unused).
   */
  transferPath: 'eip3009' | 'account';
}

/**
 * The token a call names by `contractAddress` on this network; VIXP when none is named. Besides the
 * platform's own tokens, one the operator allowed (`vixpay token allow`), in its own decimals: with
 * EIP-3009 in its own domain, else on the account path.
 */
export async function resolveToken(
  deps: Pick<WalletDeps, 'repo' | 'contracts'>,
  network: NetworkName,
  contractAddress?: string,
): Promise<ResolvedToken> {
  const vixp = deps.contracts[network].vixpToken;
  if (contractAddress === undefined || (isAddress(contractAddress) && getAddress(contractAddress) === vixp)) {
    return { contractAddress: vixp, symbol: vixpSymbol, name: vixpName, version: '1', decimals: vixpDecimals, transferPath: 'eip3009' };
  }
  if (!isAddress(contractAddress)) throw new DomainError('request.invalid', 'contractAddress is not a valid address', { details: 'contractAddress' });
  const token = await deps.repo.findToken(network, getAddress(contractAddress));
  if (token) return { contractAddress: getAddress(token.contract_address), symbol: token.symbol, name: token.name, version: '1', decimals: token.decimals, transferPath: 'eip3009' };
  const allowed = await deps.repo.findAllowedEip3009Token(network, getAddress(contractAddress));
  if (allowed) return { contractAddress: getAddress(contractAddress), ...allowed, transferPath: 'eip3009' };
  const onAccountPath = await deps.repo.findAllowedAccountToken(network, getAddress(contractAddress));
  if (!onAccountPath) throw new DomainError('wallet.unknown_token', `no token of ours at ${contractAddress} on ${network}`);
  return { contractAddress: getAddress(contractAddress), ...onAccountPath, version: '1', transferPath: 'account' };
}
