import type { FastifyInstance } from 'fastify';
import { DomainError } from '#shared/errors.ts';
import type { User } from '../../../identity/users.ts';
import { currentUser, requireUser, type AccessTokenVerifier } from '../auth-hook.ts';
import { userJwt } from '../route-schema.ts';

export interface AuthMeRoutesDeps {
  verify: AccessTokenVerifier;
  findUser(userId: string): Promise<Pick<User, 'id' | 'name' | 'walletAddress' | 'did'> | undefined>;
  /** The DID the user registered (create-did with their wallet), if any. */
  didOf(user: Pick<User, 'walletAddress' | 'did'>): Promise<string | null>;
  /** The payment network's VIXP: the token of the QR code. */
  paymentToken(): Promise<{ contractAddress: string; tokenSymbol: string }>;
}

/**
 * The fields an app puts in its payment QR code (docs/interfaces.md#calls-and-their-messages, StartPayment START_PAY: "the last five come
 * from the QR code"), except `expiration_time`: the app adds that when it shows the code (Unix
 * seconds; docs/auth-api.md).
 */
export interface QrCodeFields {
  user_uuid: string;
  user_address: string;
  contract_address: string;
  token_symbol: string;
}

export interface AuthMeReturnType {
  userId: string;
  name: string;
  walletAddress: string | null;
  did: string | null;
  /** null for a user without a wallet (none made by `vixpay user add`): such a user cannot pay. */
  qrCode: QrCodeFields | null;
}

/**
 * `GET /v2/auth/me` (JWT): who the token's user is, their wallet and DID, and their QR code's
 * fields. `user_uuid` is the user id (docs/interfaces.md#qr-code-and-pairing: the `userId` of the authenticated user record),
 * which the POS sends in StartPayment and by which the server pairs it with the app's stream.
 */
export async function authMeRoutes(app: FastifyInstance, deps: AuthMeRoutesDeps): Promise<void> {
  app.get('/me', { preHandler: requireUser(deps.verify), schema: { tags: ['auth'], summary: 'The token\'s user, wallet, DID and QR code fields', security: userJwt } }, async (request): Promise<AuthMeReturnType> => {
    const user = await deps.findUser(currentUser(request).userId);
    if (!user) throw new DomainError('request.unauthorized', 'the token\'s user no longer exists');
    const address = user.walletAddress;
    const [did, token] = await Promise.all([deps.didOf(user), address ? deps.paymentToken() : undefined]);
    return {
      userId: user.id, name: user.name, walletAddress: address, did,
      qrCode: address && token
        ? { user_uuid: user.id, user_address: address, contract_address: token.contractAddress, token_symbol: token.tokenSymbol }
        : null,
    };
  });
}
