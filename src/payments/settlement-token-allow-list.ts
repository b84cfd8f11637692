import { getAddress, isAddress } from 'viem';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import type { Clock } from '#shared/clock.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { SettlementTokenRepository } from '../store/settlement-token-repository.ts';

/** What the operator's allow-list commands need. */
export interface SettlementTokenAllowListDeps {
  wallet: Pick<WalletService, 'getTokenInfo'>;
  settlementTokens: SettlementTokenRepository;
  clock: Clock;
}

export interface AcceptedToken {
  network: NetworkName;
  contractAddress: string;
  tokenSymbol: string;
  /** The network's VIXP: always accepted, never on the list. */
  platformToken: boolean;
  /** Epoch ms the operator allowed it; null for VIXP. */
  allowedAt: number | null;
}

function contractOf(value: string): string {
  if (!isAddress(value)) throw new DomainError('request.invalid', 'the contract is not a valid address', { details: 'contract' });
  return getAddress(value);
}

/**
 * Puts a token on the allow-list of `network`: from then on it settles payments, refunds and rewards
 * there like VIXP. Only a token the platform can move is accepted (one deployed through it, with
 * EIP-3009); another contract is `wallet.unknown_token`. Allowing a listed token or VIXP changes nothing.
 */
export async function allowSettlementToken(deps: SettlementTokenAllowListDeps, network: NetworkName, contract: string): Promise<AcceptedToken> {
  const token = await deps.wallet.getTokenInfo(network, { contractAddress: contractOf(contract) });
  const platform = await deps.wallet.getTokenInfo(network, {});
  if (token.contractAddress === platform.contractAddress) {
    return { network, contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, platformToken: true, allowedAt: null };
  }
  const entry = await deps.settlementTokens.allow({ network, contractAddress: token.contractAddress, symbol: token.tokenSymbol, allowedAt: deps.clock() });
  return { network, contractAddress: entry.contractAddress, tokenSymbol: entry.symbol, platformToken: false, allowedAt: entry.allowedAt };
}

/**
 * Takes a token off the allow-list: new payments, refunds, reward claims and cancellations in it are
 * refused from then on (allow it again to refund payments made in it). VIXP cannot be taken off.
 */
export async function disallowSettlementToken(
  deps: SettlementTokenAllowListDeps, network: NetworkName, contract: string,
): Promise<{ network: NetworkName; contractAddress: string; removed: boolean }> {
  const contractAddress = contractOf(contract);
  const platform = await deps.wallet.getTokenInfo(network, {});
  if (contractAddress === platform.contractAddress) throw new DomainError('request.invalid', `VIXP always settles payments on ${network}`, { details: 'contract' });
  return { network, contractAddress, removed: await deps.settlementTokens.disallow(network, contractAddress) };
}

/** Every token that settles payments: each network's VIXP, then the allow-list. */
export async function listSettlementTokens(deps: SettlementTokenAllowListDeps, network?: NetworkName): Promise<AcceptedToken[]> {
  const networks = network ? [network] : [...networkNames];
  const tokens: AcceptedToken[] = [];
  for (const each of networks) {
    const platform = await deps.wallet.getTokenInfo(each, {});
    tokens.push({ network: each, contractAddress: platform.contractAddress, tokenSymbol: platform.tokenSymbol, platformToken: true, allowedAt: null });
    for (const entry of await deps.settlementTokens.list(each)) {
      tokens.push({ network: each, contractAddress: entry.contractAddress, tokenSymbol: entry.symbol, platformToken: false, allowedAt: entry.allowedAt });
    }
  }
  return tokens;
}
