import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '#shared/metrics.ts';
import type { Readiness } from '#shared/readiness.ts';

/** A caller's own request id is kept when it is this simple (a UUID, a ULID, a proxy's trace id). */
const wellFormedRequestId = /^[\w.:-]{1,128}$/;

/**
 * Fastify's request id options: a well-formed incoming `x-request-id` is kept, anything else (or
 * none) is replaced by a random UUID. Fastify puts it as `reqId` on every log line of the request
 * (request.log, which the JSON-RPC methods log through too) and it is answered as `x-request-id`.
 */
export const requestIdOptions = {
  // Read by genReqId below, which checks its form: Fastify would take any header value as it is.
  requestIdHeader: false as const,
  genReqId: (request: IncomingMessage): string => {
    const incoming = request.headers['x-request-id'];
    return typeof incoming === 'string' && wellFormedRequestId.test(incoming) ? incoming : randomUUID();
  },
};

/**
 * `GET /readyz`, `GET /metrics`, the request id reply header and the HTTP request metrics. Call it on
 * the root instance before any route is registered: its hooks then apply to every route.
 */
export function installObservability(app: FastifyInstance, deps: { metrics: Metrics; readiness: Readiness }): void {
  const { metrics, readiness } = deps;
  // Callback hooks, not async ones: they run on every request, and need no promise.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    // The route's template (`/v1/ict/pay/:transactionId`), never the URL: bounded label values.
    const labels = { route: request.routeOptions.url ?? 'unmatched', method: request.method, status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });

  // Polled like /healthz: only errors are logged.
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const { ready, checks, warnings, details } = await readiness.check();
    const down = Object.entries(checks).filter(([, check]) => check.status === 'down').map(([name]) => name);
    const said = { ...(warnings && { warnings }), ...details };
    return reply.status(ready ? 200 : 503).send(ready ? { status: 'ready', checks, ...said } : { status: 'not ready', down, checks, ...said });
  });
  app.get('/metrics', { logLevel: 'warn' }, async (_request, reply) => {
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}
