import { randomUUID } from 'node:crypto';
import { getAddress, isAddress, type Address } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { SettlementTokenRepository } from '../store/settlement-token-repository.ts';
import type { UserService } from '../identity/users.ts';
import type { LoginRateLimiter } from '../identity/login-rate-limiter.ts';
import type { WalletService } from '../wallet/wallet-service.ts';

export interface PayDeps {
  users: Pick<UserService, 'verifyPassword' | 'findUser'>;
  rateLimiter: LoginRateLimiter;
  wallet: Pick<WalletService, 'transferFromCustody' | 'getTokenInfo'>;
  /** Tokens besides VIXP that may be paid in (the operator allow-list), named by their symbol. */
  settlementTokens: Pick<SettlementTokenRepository, 'find' | 'findBySymbol'>;
  network: NetworkName;
  /** The platform's receiving account (PAY_RECEIVER_ADDRESS, by default the treasury). */
  receiver: Address;
}

export interface PayParameters {
  /** The authenticated user (from the JWT). */
  userId: string;
  tokenName: string;
  amount: string;
  myAddress: string;
  password: string;
  /** Client address, for the failed-password throttle. */
  clientIp: string;
  /** The operation's transfer reference (`pay:<id>`); a fresh one when not given. */
  reference?: string;
}

export interface PayReturnType {
  /** The transaction that carried the transfer (`pending`: the one sent for it; may be empty if none was sent yet). */
  transactionId: string;
  /** `pending`: sent, not settled on chain within the receipt wait; it executes at most once (see docs/pay-api.md). */
  status: 'confirmed' | 'pending';
  tokenName: string;
  amount: string;
  fromAddress: Address;
  toAddress: Address;
  network: NetworkName;
}

/** The token a REST payment moves. */
export interface PayToken {
  contractAddress: string;
  tokenSymbol: string;
  /** The platform token (VIXP): the wallet's default transfer, named by no contract. */
  platformToken: boolean;
}

/**
 * The token `tokenName` names: VIXP, or the symbol of the one token on the operator allow-list with
 * that symbol (as a QR code's token_symbol without contract_address names it), on either transfer
 * path (EIP-3009, or the account contract for USDT and the like). Anything else is
 * `wallet.unknown_token` (404), before any password is checked.
 */
export async function payToken(deps: Pick<PayDeps, 'wallet' | 'settlementTokens' | 'network'>, tokenName: string): Promise<PayToken> {
  const platform = await deps.wallet.getTokenInfo(deps.network, {});
  if (tokenName === platform.tokenSymbol) return { contractAddress: platform.contractAddress, tokenSymbol: platform.tokenSymbol, platformToken: true };
  const named = JSON.stringify(tokenName.slice(0, 20));
  const listed = await deps.settlementTokens.findBySymbol(deps.network, tokenName);
  if (listed.length !== 1) {
    const why = listed.length === 0 ? `use ${platform.tokenSymbol} or the symbol of a token the operator allowed` : 'several allowed tokens have this symbol';
    throw new DomainError('wallet.unknown_token', `tokenName ${named} is not available on ${deps.network}; ${why}`);
  }
  const token = listed[0]!;
  return { contractAddress: token.contractAddress, tokenSymbol: token.symbol, platformToken: false };
}

/**
 * REST pay: the JWT's user pays the platform's receiving account from their custodial wallet, in
 * VIXP or an allowed token (its own decimals: the amount may have no more of them).
 * The password is checked before the account key is touched, and `myAddress` must be the user's
 * own wallet; the transfer then runs the wallet's journaled, gasless path.
 */
export async function pay(deps: PayDeps, params: PayParameters): Promise<PayReturnType> {
  const token = await payToken(deps, params.tokenName);
  // Stryker disable next-line ObjectLiteral: `{}` leaves viem's default, strict (equivalent); said here so a change of that default cannot loosen the check
  if (!isAddress(params.myAddress, { strict: true })) {
    throw new DomainError('request.invalid', 'myAddress is not a valid address', { details: 'myAddress' });
  }
  const attempt = await deps.rateLimiter.beginAttempt(params.userId, params.clientIp);
  const user = await deps.users.verifyPassword(params.userId, params.password);
  await attempt.succeeded();
  const fromAddress = getAddress(params.myAddress);
  if (!user.walletAddress || getAddress(user.walletAddress) !== fromAddress) {
    throw new DomainError('request.unauthorized', 'myAddress is not the wallet address of the signed-in user');
  }
  const outcome = await deps.wallet.transferFromCustody(deps.network, {
    fromAddress, toAddress: deps.receiver, amount: params.amount, reference: params.reference ?? `pay:${randomUUID()}`,
    // VIXP's transfer is the wallet's default, as before other tokens could be paid in.
    ...(!token.platformToken && { contractAddress: token.contractAddress }),
  });
  if (outcome.status === 'refused') throw outcome.error;
  const answer = { tokenName: token.tokenSymbol, amount: params.amount, fromAddress, toAddress: deps.receiver, network: deps.network };
  if (outcome.status === 'pending') return { transactionId: outcome.transactionId ?? '', status: 'pending', ...answer };
  return { transactionId: outcome.transactionId, status: 'confirmed', ...answer };
}
