import type { Metadata } from '@grpc/grpc-js';
import { DomainError } from '#shared/errors.ts';

/** Verifies a user's access token (JWT); same shape as the HTTP transport's AccessTokenVerifier. */
export type AccessTokenVerifier = (token: string) => Promise<{ userId: string }>;

/** The wallet account of a user (the users table's wallet address). */
export type FindUserWallet = (userId: string) => Promise<{ address: string } | undefined>;

/** `authorization: Bearer <token>` metadata: the app's JWT or the POS's API key. */
export function bearerOf(metadata: Metadata): string {
  const [value] = metadata.get('authorization');
  const match = typeof value === 'string' ? /^Bearer\s+(\S+)$/i.exec(value) : null;
  if (!match?.[1]) throw new DomainError('request.unauthorized', 'authorization: Bearer <token> metadata required');
  return match[1];
}

/** The app's user and wallet address from its JWT. */
export async function authenticateUser(
  deps: { verifyAccessToken: AccessTokenVerifier; findUserWallet: FindUserWallet },
  metadata: Metadata,
): Promise<{ userId: string; address: string }> {
  const { userId } = await deps.verifyAccessToken(bearerOf(metadata));
  const wallet = await deps.findUserWallet(userId);
  if (!wallet) throw new DomainError('request.unauthorized', 'the user has no wallet account');
  return { userId, address: wallet.address };
}
