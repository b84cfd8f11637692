import type { FastifyInstance } from 'fastify';
import type { JwtService } from '../../../identity/jwt.ts';

export interface JwksRoutesDeps {
  jwt: Pick<JwtService, 'jwks'> & Partial<Pick<JwtService, 'reloadKeys'>>;
}

/**
 * `GET /.well-known/jwks.json`: the public keys that verify our access tokens (RFC 7517), for
 * services that check tokens themselves. Register at the root: `await app.register(jwksRoutes, { jwt })`.
 */
export async function jwksRoutes(app: FastifyInstance, deps: JwksRoutesDeps): Promise<void> {
  app.get('/.well-known/jwks.json', { schema: { tags: ['auth'], summary: 'Public keys verifying our access tokens (RFC 7517)' } }, async (_request, reply) => {
    // Every key still verifying, as the fleet's database holds them now (`vixpay keys rotate`). Short
    // cache: a rotated key shows up within five minutes, long before the old key stops verifying.
    await deps.jwt.reloadKeys?.();
    reply.header('cache-control', 'public, max-age=300');
    return deps.jwt.jwks();
  });
}
