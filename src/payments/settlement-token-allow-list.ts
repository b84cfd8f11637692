import { getAddress, isAddress, type Address } from 'viem';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import type { Clock } from '#shared/clock.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { SettlementTokenRecord, SettlementTokenRepository, TransferPath } from '../store/settlement-token-repository.ts';
import type { TokenInspection } from '../chain/token-inspection.ts';

/** What the operator's allow-list commands need. */
export interface SettlementTokenAllowListDeps {
  wallet: Pick<WalletService, 'getTokenInfo'>;
  settlementTokens: SettlementTokenRepository;
  clock: Clock;
  /** Reads and tries the contract on the network (src/chain/token-inspection.ts); refuses what cannot settle. */
  inspect(network: NetworkName, contract: Address, options: { holder?: Address }): Promise<TokenInspection>;
}

export interface AcceptedToken {
  network: NetworkName;
  contractAddress: string;
  tokenSymbol: string;
  decimals: number;
  /** It has EIP-3009 (custodial transfers are authorizations the relayer settles). */
  eip3009: boolean;
  /**
   * `account`: no EIP-3009, moved by the account contract through EIP-7702, which the relayer does
   * not carry yet: payments in it are refused (`payment.token_not_accepted`) until it does.
   */
  transferPath: TransferPath;
  /** The network's VIXP: always accepted, never on the list. */
  platformToken: boolean;
  /** Epoch ms the operator allowed it; null for VIXP. */
  allowedAt: number | null;
}

const platformEntry = (network: NetworkName, token: { contractAddress: string; tokenSymbol: string; decimals: number }): AcceptedToken => ({
  network, contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, decimals: token.decimals, eip3009: true, transferPath: 'eip3009',
  platformToken: true, allowedAt: null,
});

const listedEntry = (network: NetworkName, entry: SettlementTokenRecord): AcceptedToken => ({
  network, contractAddress: entry.contractAddress, tokenSymbol: entry.symbol, decimals: entry.decimals, eip3009: entry.eip712Version !== null,
  transferPath: entry.transferPath, platformToken: false, allowedAt: entry.allowedAt,
});

function contractOf(value: string): Address {
  if (!isAddress(value)) throw new DomainError('request.invalid', 'the contract is not a valid address', { details: 'contract' });
  return getAddress(value);
}

/**
 * Puts a token on the allow-list of `network`: from then on it settles payments, refunds and rewards
 * there like VIXP, in its own decimals. Any ERC-20 the platform can move is accepted, as the chain
 * answers its inspection (src/chain/token-inspection.ts: a trial transfer from `holder`, or from a
 * holder found in its Transfer logs); anything else is refused with the inspection's code. Allowing
 * a listed token or VIXP changes nothing.
 */
export async function allowSettlementToken(
  deps: SettlementTokenAllowListDeps, network: NetworkName, contract: string, options: { holder?: string } = {},
): Promise<AcceptedToken> {
  const contractAddress = contractOf(contract);
  let holder: Address | undefined;
  if (options.holder !== undefined) {
    if (!isAddress(options.holder)) throw new DomainError('request.invalid', 'the holder is not a valid address', { details: 'holder' });
    holder = getAddress(options.holder);
  }
  const platform = await deps.wallet.getTokenInfo(network, {});
  if (contractAddress === platform.contractAddress) return platformEntry(network, platform);
  const listed = await deps.settlementTokens.find(network, contractAddress);
  if (listed) return listedEntry(network, listed);
  const token = await deps.inspect(network, contractAddress, holder ? { holder } : {});
  const entry = await deps.settlementTokens.allow({
    network, contractAddress: token.contractAddress, symbol: token.symbol, name: token.eip3009?.name ?? token.name, decimals: token.decimals, allowedAt: deps.clock(),
    eip712Version: token.eip3009?.version ?? null, transferPath: token.transferPath,
  });
  return listedEntry(network, entry);
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
    tokens.push(platformEntry(each, await deps.wallet.getTokenInfo(each, {})));
    for (const entry of await deps.settlementTokens.list(each)) tokens.push(listedEntry(each, entry));
  }
  return tokens;
}
