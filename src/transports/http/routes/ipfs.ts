import type { FastifyInstance } from 'fastify';
import type { IpfsBackend } from '../../../ipfs/ipfs-backend.ts';
import { defaultIpfsLimits, type IpfsLimits } from '../../../ipfs/ipfs-limits.ts';
import { requireUser, type AccessTokenVerifier } from '../auth-hook.ts';
import { userJwt, zodRoute } from '../route-schema.ts';
import { addBody, addQuery, addRoute } from './ipfs-add.ts';
import { catQuery, catRoute, getHeaders, getQuery, getRoute, readParams } from './ipfs-read.ts';

export interface IpfsRoutesDeps {
  backend: IpfsBackend;
  /** Checks `Authorization: Bearer <ACCESS_TOKEN>` on every route. */
  verify: AccessTokenVerifier;
  /** Caps of the add request; `defaultIpfsLimits` when omitted. */
  limits?: IpfsLimits;
}

/**
 * The private IPFS API (docs/interfaces.md#ipfs-api, docs/ipfs-api.md), a Fastify plugin:
 *
 * @example
 * await app.register(ipfsRoutes, { prefix: '/v1/ipfs', backend, verify, limits });
 *
 * Every route requires a user JWT; it is checked on request, before an upload is read.
 * Uploads are parsed here, streaming (the multipart body is never buffered), so this scope
 * replaces any `multipart/form-data` parser registered above it.
 */
export async function ipfsRoutes(app: FastifyInstance, deps: IpfsRoutesDeps): Promise<void> {
  const limits = deps.limits ?? defaultIpfsLimits;
  const routeDeps = { backend: deps.backend, limits };
  const authenticate = requireUser(deps.verify);
  app.addHook('onRequest', async function (request, reply) {
    try {
      await authenticate.call(this, request, reply);
    } catch (error) {
      // An upload without a valid token is not read at all.
      if (!request.raw.complete) reply.header('connection', 'close');
      throw error;
    }
  });

  // Bodies stay unread here: the add route streams request.raw itself, and refuses with a
  // request.invalid anything that is not multipart/form-data.
  if (app.hasContentTypeParser('multipart/form-data')) app.removeContentTypeParser('multipart/form-data');
  app.addContentTypeParser('multipart/form-data', (_request, _payload, done) => done(null));
  if (!app.hasContentTypeParser('*')) app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  // Static routes win over `/:cid` in Fastify's router; they are registered first all the same.
  const tags = ['ipfs'];
  const security = userJwt;
  app.get('/id', { schema: { tags, security, summary: 'The node\'s peer id' } }, async () => ({ id: await deps.backend.id() }));
  app.get('/version', { schema: { tags, security, summary: 'The node\'s version' } }, async () => ({ version: await deps.backend.version() }));
  app.post('/add', zodRoute({ querystring: addQuery, body: addBody, tags, security, summary: 'Add files or a directory (multipart), answer its CID' }), addRoute(routeDeps));
  app.get('/:cid', zodRoute({ params: readParams, querystring: catQuery, tags, security, summary: 'A file as text, or a directory\'s entries' }), catRoute(routeDeps));
  app.get('/:cid/get', zodRoute({ params: readParams, querystring: getQuery, headers: getHeaders, tags, security, summary: 'Download a file (Range) or a directory as tar' }), getRoute(routeDeps));
}
