import type { FastifyInstance } from 'fastify';
import type { JwtService } from '../../../identity/jwt.ts';

export interface JwksRoutesDeps {
  jwt: Pick<JwtService, 'jwks'>;
}

/**
 * `GET /.well-known/jwks.json`: the public keys that verify our access tokens (RFC 7517), for
 * services that check tokens themselves. Register at the root: `await app.register(jwksRoutes, { jwt })`.
 */
export async function jwksRoutes(app: FastifyInstance, deps: JwksRoutesDeps): Promise<void> {
  app.get('/.well-known/jwks.json', { schema: { tags: ['auth'], summary: 'Public keys verifying our access tokens (RFC 7517)' } }, async (_request, reply) => {
    // Short cache: a rotated key shows up within five minutes.
    reply.header('cache-control', 'public, max-age=300');
    return deps.jwt.jwks();
  });
}
