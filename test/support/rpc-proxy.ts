import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC node in front of `target` (a real anvil) that lacks the methods named in `lacking`: each
 * is answered with JSON-RPC's "method not found" (-32601), as a node without it answers (Hardhat's
 * node has no `eth_getBlockReceipts`), those named in `unsupported` with "method not supported"
 * (-32004), and those named in `failing` with an internal error (-32603), as a node that fails the call answers; every other call reaches `target` as sent. `calls` counts the
 * calls by method, the refused ones included (not those of a request refused whole: throttled, down).
 */
export interface RpcProxy {
  url: string;
  calls: Map<string, number>;
  /**
   * A provider's limits, changeable while it runs: every `every`-th HTTP request (a batch as one) is
   * answered HTTP 429 with `Retry-After: retryAfterSeconds` (`as: 'http'`), or HTTP 200 with each call's
   * JSON-RPC error −32005 "limit exceeded" (`as: 'jsonrpc'`); `every: 1` throttles them all.
   */
  throttle: { every: number; retryAfterSeconds?: number; as: 'http' | 'jsonrpc' } | undefined;
  /** A provider failing: every request answered HTTP 503 while true. */
  down: boolean;
  /** HTTP requests refused so far (throttled or down). */
  refused: number;
  close(): Promise<void>;
}

interface RpcCall {
  id?: unknown;
  method?: unknown;
}

export async function startRpcProxy(target: string, options: { lacking?: string[]; unsupported?: string[]; failing?: string[] } = {}): Promise<RpcProxy> {
  const lacking = new Set(options.lacking ?? []);
  const unsupported = new Set(options.unsupported ?? []);
  const failing = new Set(options.failing ?? []);
  const calls = new Map<string, number>();
  let requests = 0;
  const proxy: RpcProxy = { url: '', calls, throttle: undefined, down: false, refused: 0, close: async () => undefined };
  const answer = async (call: RpcCall): Promise<unknown> => {
    const method = String(call.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (lacking.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
    if (unsupported.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32004, message: `the method ${method} is not supported` } };
    if (failing.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32603, message: `${method} failed` } };
    const reply = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    return reply.json();
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as RpcCall | RpcCall[];
          requests++;
          if (proxy.down) {
            proxy.refused++;
            response.writeHead(503, { 'content-type': 'text/plain' }).end('service unavailable');
            return;
          }
          const { throttle } = proxy;
          if (throttle && requests % throttle.every === 0) {
            proxy.refused++;
            if (throttle.as === 'http') {
              response.writeHead(429, { 'content-type': 'application/json', 'retry-after': String(throttle.retryAfterSeconds ?? 1) })
                .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'too many requests' } }));
              return;
            }
            const limited = (call: RpcCall) => ({ jsonrpc: '2.0', id: call.id ?? null, error: { code: -32005, message: 'request rate limited', data: { backoff_seconds: throttle.retryAfterSeconds ?? 1 } } });
            response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(Array.isArray(body) ? body.map(limited) : limited(body)));
            return;
          }
          const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
        } catch {
          response.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () => new Promise((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });
  return proxy;
}
