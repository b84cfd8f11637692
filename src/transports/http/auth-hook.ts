import type { FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { DomainError } from '#shared/errors.ts';

/** The authenticated caller of an HTTP API, from a verified JWT. */
export interface AuthenticatedUser {
  userId: string;
}

/** Verifies an access token (JWT) and says whose it is; throws `request.unauthorized` otherwise. */
export type AccessTokenVerifier = (token: string) => Promise<AuthenticatedUser>;

declare module 'fastify' {
  interface FastifyRequest {
    user?: AuthenticatedUser;
  }
}

/** preHandler for the JWT-protected APIs: `Authorization: Bearer <ACCESS_TOKEN>`. */
export function requireUser(verify: AccessTokenVerifier): preHandlerAsyncHookHandler {
  return async (request: FastifyRequest) => {
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)$/i.exec(header) : null;
    if (!match?.[1]) throw new DomainError('request.unauthorized', 'Authorization: Bearer <ACCESS_TOKEN> required');
    request.user = await verify(match[1]);
  };
}

export function currentUser(request: FastifyRequest): AuthenticatedUser {
  if (!request.user) throw new DomainError('request.unauthorized', 'not authenticated');
  return request.user;
}
