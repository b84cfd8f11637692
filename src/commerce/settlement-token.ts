import { getAddress, isAddress } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { CommerceDeps } from './commerce-deps.ts';

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
 * named), or a token on the operator allow-list. Anything else, in particular a token a user made
 * with createToken whatever its name or symbol, is `payment.token_not_accepted`. Callers check this
 * before the app is asked to pay and before any transfer.
 */
export async function resolveSettlementToken(deps: SettlementTokenDeps, network: NetworkName, named: NamedToken): Promise<SettlementToken> {
  const platform = await deps.wallet.getTokenInfo(network, {});
  let contractAddress = platform.contractAddress;
  if (named.contractAddress) {
    if (!isAddress(named.contractAddress)) throw new DomainError('request.invalid', 'contract_address is not a valid address', { details: 'contract_address' });
    contractAddress = getAddress(named.contractAddress);
    if (contractAddress !== platform.contractAddress && !(await deps.settlementTokens.find(network, contractAddress))) {
      throw notAccepted(`token ${contractAddress}`, network);
    }
  } else if (named.tokenSymbol && named.tokenSymbol !== platform.tokenSymbol) {
    // A symbol alone is any user's to take: only the allow-list's own entry for it counts.
    const listed = await deps.settlementTokens.findBySymbol(network, named.tokenSymbol);
    if (listed.length !== 1) throw notAccepted(`token_symbol ${JSON.stringify(named.tokenSymbol.slice(0, 16))} without contract_address`, network);
    contractAddress = listed[0]!.contractAddress;
  }
  const token = contractAddress === platform.contractAddress ? platform : await deps.wallet.getTokenInfo(network, { contractAddress });
  if (named.tokenSymbol && named.tokenSymbol !== token.tokenSymbol) {
    throw new DomainError('request.invalid', 'token_symbol does not match contract_address', { details: 'token_symbol' });
  }
  return { contractAddress: token.contractAddress, tokenSymbol: token.tokenSymbol, decimals: token.decimals };
}
