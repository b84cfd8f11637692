import { randomUUID } from 'node:crypto';
import { getAddress, isAddress, type Address } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { vixpSymbol } from '../chain/platform-contracts.ts';
import { DomainError } from '#shared/errors.ts';
import type { UserService } from '../identity/users.ts';
import type { LoginRateLimiter } from '../identity/login-rate-limiter.ts';
import type { WalletService } from '../wallet/wallet-service.ts';

export interface PayDeps {
  users: Pick<UserService, 'verifyPassword' | 'findUser'>;
  rateLimiter: LoginRateLimiter;
  wallet: Pick<WalletService, 'transferFromCustody'>;
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

/**
 * REST pay: the JWT's user pays the platform's receiving account from their custodial wallet.
 * The password is checked before the account key is touched, and `myAddress` must be the user's
 * own wallet; the transfer then runs the wallet's journaled, gasless path.
 */
export async function pay(deps: PayDeps, params: PayParameters): Promise<PayReturnType> {
  if (params.tokenName !== vixpSymbol) {
    throw new DomainError('wallet.unknown_token', `tokenName ${JSON.stringify(params.tokenName.slice(0, 20))} is not available; use ${vixpSymbol}`);
  }
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
  });
  if (outcome.status === 'refused') throw outcome.error;
  const answer = { tokenName: vixpSymbol, amount: params.amount, fromAddress, toAddress: deps.receiver, network: deps.network };
  if (outcome.status === 'pending') return { transactionId: outcome.transactionId ?? '', status: 'pending', ...answer };
  return { transactionId: outcome.transactionId, status: 'confirmed', ...answer };
}
