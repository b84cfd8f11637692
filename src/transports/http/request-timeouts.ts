import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/config.ts';

/** How long a client may take to send its request (docs/decisions/operating.md "Bounded resources"). */
export interface RequestTimeouts {
  /** The request line and headers (Node's `headersTimeout`). */
  headersTimeoutMs: number;
  /** The whole request, body included (Node's `requestTimeout`): the ceiling for the largest upload. */
  requestTimeoutMs: number;
  /** A socket without traffic either way for this long is closed (Fastify's `connectionTimeout`). */
  connectionTimeoutMs: number;
  /** A body arriving slower than this on average over `bodyRateWindowMs` is cut off with 408; 0: no check. */
  minBodyBytesPerSecond: number;
  bodyRateWindowMs: number;
}

/** The timeouts of HTTP_HEADERS_TIMEOUT_SECONDS, HTTP_REQUEST_TIMEOUT_SECONDS, HTTP_CONNECTION_TIMEOUT_SECONDS, HTTP_MIN_BODY_BYTES_PER_SECOND, HTTP_BODY_RATE_WINDOW_SECONDS. */
export function requestTimeoutsOf(config: Pick<Config, 'httpHeadersTimeoutMs' | 'httpRequestTimeoutMs' | 'httpConnectionTimeoutMs' | 'httpMinBodyBytesPerSecond' | 'httpBodyRateWindowMs'>): RequestTimeouts {
  return {
    headersTimeoutMs: config.httpHeadersTimeoutMs,
    requestTimeoutMs: config.httpRequestTimeoutMs,
    connectionTimeoutMs: config.httpConnectionTimeoutMs,
    minBodyBytesPerSecond: config.httpMinBodyBytesPerSecond,
    bodyRateWindowMs: config.httpBodyRateWindowMs,
  };
}

/** What Node answers when its own requestTimeout fires, answered the same way by the body-rate check. */
const requestTimeoutResponse = 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n';

/**
 * Bounds slow clients. Node checks `headersTimeout` and `requestTimeout` every 30 s (its
 * connectionsCheckingInterval), so those fire up to 30 s late. `requestTimeout` alone cannot tell a
 * large upload on a slow link from a body trickled to hold a socket, so besides it a body must keep
 * arriving at `minBodyBytesPerSecond` over each window: a byte-a-second body is cut off one window
 * (10 s by default) after it starts, while a 300 MiB IPFS upload is bounded only by `requestTimeout`.
 */
export function installRequestTimeouts(app: FastifyInstance, timeouts: RequestTimeouts): void {
  const server = app.server;
  server.requestTimeout = timeouts.requestTimeoutMs;
  // Node requires headersTimeout <= requestTimeout.
  server.headersTimeout = Math.min(timeouts.headersTimeoutMs, timeouts.requestTimeoutMs);
  server.setTimeout(timeouts.connectionTimeoutMs);
  if (timeouts.minBodyBytesPerSecond <= 0) return;
  const minBytesPerWindow = (timeouts.minBodyBytesPerSecond * timeouts.bodyRateWindowMs) / 1000;

  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    if (!hasBody(raw.headers) || raw.complete) return done();
    const socket = raw.socket;
    let lastRead = socket.bytesRead;
    const timer = setInterval(() => {
      if (raw.complete || socket.destroyed) return stop();
      const read = socket.bytesRead;
      if (read - lastRead >= minBytesPerWindow) {
        lastRead = read;
        return;
      }
      stop();
      request.log.warn({ url: request.url, bytesPerSecond: Math.round(((read - lastRead) * 1000) / timeouts.bodyRateWindowMs) }, 'request body too slow: cut off');
      if (!reply.raw.headersSent) socket.end(requestTimeoutResponse);
      // The client may keep trickling into our half-closed socket: drop it for good shortly after.
      setTimeout(() => socket.destroy(), 1000).unref();
    }, timeouts.bodyRateWindowMs);
    timer.unref();
    const stop = () => clearInterval(timer);
    raw.once('end', stop);
    raw.once('close', stop);
    reply.raw.once('close', stop);
    done();
  });
}

function hasBody(headers: { 'content-length'?: string | undefined; 'transfer-encoding'?: string | undefined }): boolean {
  return headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) > 0;
}
