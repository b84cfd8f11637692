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
  /** HTTP requests a node behind answered (`behind`). */
  answeredBehind: number;
  close(): Promise<void>;
}

interface RpcCall {
  id?: unknown;
  method?: unknown;
  params?: unknown[];
}

/**
 * `behind`: the URL is a load balancer over two nodes of one chain, every other HTTP request (a batch
 * as one) answered by a node `blocks` behind the other: what a provider's replica that lags answers,
 * from the target's own state at that block. Its head is `blocks` lower; a receipt, transaction or
 * block above it is not there yet (null, a transaction pending); reads at `latest` are at its head, at
 * a block above it "header not found" (−32000, as geth answers); a raw transaction is passed on to
 * the network (the target), as a node's peers pass it on.
 */
export interface ProxyOptions { lacking?: string[]; unsupported?: string[]; failing?: string[]; behind?: { blocks: number } }

const stateTagAt: Record<string, number> = { eth_getTransactionCount: 1, eth_getBalance: 1, eth_call: 1, eth_estimateGas: 1, eth_getCode: 1, eth_getStorageAt: 2 };

export async function startRpcProxy(target: string, options: ProxyOptions = {}): Promise<RpcProxy> {
  const lacking = new Set(options.lacking ?? []);
  const unsupported = new Set(options.unsupported ?? []);
  const failing = new Set(options.failing ?? []);
  const calls = new Map<string, number>();
  let requests = 0;
  const proxy: RpcProxy = { url: '', calls, throttle: undefined, down: false, refused: 0, answeredBehind: 0, close: async () => undefined };
  const forward = async (call: RpcCall): Promise<{ result?: unknown; error?: unknown; id?: unknown }> => {
    const reply = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(call) });
    return reply.json() as Promise<{ result?: unknown }>;
  };
  /** The answer of the node `behind.blocks` behind, at `view` (its head). */
  const answerBehind = async (call: RpcCall, view: bigint): Promise<unknown> => {
    const method = String(call.method);
    const params = [...(call.params ?? [])];
    const id = call.id ?? null;
    const hex = (n: bigint) => `0x${n.toString(16)}`;
    const above = (block: unknown) => typeof block === 'string' && block.startsWith('0x') && BigInt(block) > view;
    const empty = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    if (method === 'eth_blockNumber') return empty(hex(view));
    if (method === 'eth_getBlockByNumber' || method === 'eth_getBlockReceipts') {
      if (params[0] === 'latest' || params[0] === 'pending' || params[0] === undefined) params[0] = hex(view);
      else if (above(params[0])) return empty(null);
      return forward({ ...call, params });
    }
    if (method in stateTagAt) {
      const at = stateTagAt[method] as number;
      if (params[at] === undefined || params[at] === 'latest') params[at] = hex(view);
      else if (above(params[at])) return { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } };
      return forward({ ...call, params });
    }
    const reply = await forward(call);
    const mined = reply.result as { blockNumber?: unknown } | null | undefined;
    if ((method === 'eth_getTransactionReceipt' || method === 'eth_getBlockByHash') && mined && above(mined.blockNumber ?? (mined as { number?: unknown }).number)) return empty(null);
    if (method === 'eth_getTransactionByHash' && mined && above(mined.blockNumber)) {
      return empty({ ...mined, blockNumber: null, blockHash: null, transactionIndex: null });
    }
    return reply;
  };
  let viewOf: (() => Promise<bigint>) | undefined;
  if (options.behind) {
    const { blocks } = options.behind;
    viewOf = async () => {
      const head = BigInt((await forward({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber' } as RpcCall)).result as string);
      return head > BigInt(blocks) ? head - BigInt(blocks) : 0n;
    };
  }
  const answer = async (call: RpcCall, view?: bigint): Promise<unknown> => {
    const method = String(call.method);
    calls.set(method, (calls.get(method) ?? 0) + 1);
    if (lacking.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32601, message: `the method ${method} does not exist/is not available` } };
    if (unsupported.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32004, message: `the method ${method} is not supported` } };
    if (failing.has(method)) return { jsonrpc: '2.0', id: call.id ?? null, error: { code: -32603, message: `${method} failed` } };
    if (view !== undefined) return answerBehind(call, view);
    return forward(call);
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
          // A load balancer: every other request goes to the node behind (when there is one).
          const view = viewOf && requests % 2 === 0 ? await viewOf() : undefined;
          if (view !== undefined) proxy.answeredBehind++;
          const reply = Array.isArray(body) ? await Promise.all(body.map((call) => answer(call, view))) : await answer(body, view);
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
