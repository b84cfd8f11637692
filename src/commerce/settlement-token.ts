import { getAddress, isAddress } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { CommerceDeps } from './commerce-deps.ts';
import type { SettlementTokenRecord } from '../store/settlement-token-repository.ts';

export interface SettlementTokenDeps extends Pick<CommerceDeps, 'settlementTokens'> {
  wallet: Pick<WalletService, 'getTokenInfo'>;
}

/** The token a QR code, a POS message, a claim or a stored payment names. */
export interface NamedToken {
  contractAddress?: string;
  tokenSymbol?: string;
}

export interface SettlementToken {
  contractAddress: string;
  tokenSymbol: string;
  decimals: number;
}

const notAccepted = (what: string, network: NetworkName) =>
  new DomainError('payment.token_not_accepted', `${what} does not settle payments on ${network}: only VIXP or a token the operator allowed does`);

/**
 * The token a payment, refund or reward may move: the network's VIXP (the default when nothing is
 * named), or a token on the operator allow-list, with EIP-3009 or without (USDT, the BEP-20 pegs:
 * custodial accounts move those through the account contract they delegate to by EIP-7702,
 * src/wallet/authorize-account-transfer.ts). Anything else, in particular a token a user made
 * with createToken whatever its name or symbol, is `payment.token_not_accepted`. Callers check this
 * before the app is asked to pay and before any transfer.
 */
export async function resolveSettlementToken(deps: SettlementTokenDeps, network: NetworkName, named: NamedToken): Promise<SettlementToken> {
  const platform = await deps.wallet.getTokenInfo(network, {});
  let listed: SettlementTokenRecord | undefined;
  if (named.contractAddress) {
    if (!isAddress(named.contractAddress)) throw new DomainError('request.invalid', 'contract_address is not a valid address', { details: 'contract_address' });
    const contractAddress = getAddress(named.contractAddress);
    if (contractAddress !== platform.contractAddress) {
      listed = await deps.settlementTokens.find(network, contractAddress);
      if (!listed) throw notAccepted(`token ${contractAddress}`, network);
    }
  } else if (named.tokenSymbol && named.tokenSymbol !== platform.tokenSymbol) {
    // A symbol alone is any user's to take: only the allow-list's own entry for it counts.
    const bySymbol = await deps.settlementTokens.findBySymbol(network, named.tokenSymbol);
    if (bySymbol.length !== 1) throw notAccepted(`token_symbol ${JSON.stringify(named.tokenSymbol.slice(0, 16))} without contract_address`, network);
    listed = bySymbol[0]!;
  }
  const token = listed
    ? { contractAddress: listed.contractAddress, tokenSymbol: listed.symbol, decimals: listed.decimals }
    : { contractAddress: platform.contractAddress, tokenSymbol: platform.tokenSymbol, decimals: platform.decimals };
  if (named.tokenSymbol && named.tokenSymbol !== token.tokenSymbol) {
    throw new DomainError('request.invalid', 'token_symbol does not match contract_address', { details: 'token_symbol' });
  }
  return token;
}
