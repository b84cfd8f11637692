import type { FastifyInstance, FastifyReply } from 'fastify';
import type { NetworkName } from '#shared/networks.ts';
import type { Dispatcher } from '../../jsonrpc/dispatcher.ts';
import { protocolError } from '../../jsonrpc/protocol-errors.ts';
import { stringifyJson } from '#shared/json.ts';
import { networkFromHost } from '../host-network.ts';
import { zodRoute } from '../route-schema.ts';
import { jsonRpcRequestSchema } from './jsonrpc-schema.ts';

export interface JsonRpcRoutesDeps {
  /** URL path → the dispatcher of the methods served there. */
  endpoints: Readonly<Record<string, Dispatcher>>;
  hostLabels: Readonly<Record<string, NetworkName>>;
}

/**
 * Mounts each JSON-RPC endpoint. The body is taken as text (any content type) so that a
 * malformed one is answered -32700 by the dispatcher rather than by the HTTP layer, and every
 * error in this scope, including a body over the size limit, keeps the JSON-RPC shape.
 */
export async function jsonRpcRoutes(app: FastifyInstance, deps: JsonRpcRoutesDeps): Promise<void> {
  app.removeAllContentTypeParsers();
  const asText = (_request: unknown, body: string | Buffer, done: (error: null, body: string | Buffer) => void) => done(null, body);
  // application/json named as well: Fastify remembers the parser of a named type, while it looks
  // the catch-all up again for every request.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, asText);
  app.addContentTypeParser('*', { parseAs: 'string' }, asText);
  app.setErrorHandler((error: { statusCode?: number; code?: string }, request, reply) => {
    const tooLarge = error.statusCode === 413;
    if (!tooLarge) request.log.error({ err: error }, 'JSON-RPC transport error');
    const body = { jsonrpc: '2.0', id: null, error: tooLarge ? protocolError('invalidRequest', 'request body too large') : protocolError('internal') };
    return send(reply.status(tooLarge ? 413 : 500), stringifyJson(body));
  });

  for (const [url, dispatcher] of Object.entries(deps.endpoints)) {
    const schema = zodRoute({
      body: jsonRpcRequestSchema(dispatcher.methods), tags: ['json-rpc'],
      summary: `JSON-RPC 2.0: ${Object.keys(dispatcher.methods).join(', ')}`,
      description: 'The network is the one the Host label selects (docs/chain-api.md). Answers 200 with the JSON-RPC response (errors included), 204 for notifications only.',
    });
    app.post(url, schema, async (request, reply) => {
      const body = typeof request.body === 'string' ? request.body : '';
      const answer = await dispatcher.handle(body, {
        network: () => networkFromHost(request.headers.host, deps.hostLabels),
        log: request.log,
      });
      return answer === undefined ? reply.status(204).send() : send(reply, answer);
    });
  }
}

function send(reply: FastifyReply, json: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(json);
}
