import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A JSON-RPC node in front of `target` (a real anvil) that lacks the methods named in `lacking`: each
 * is answered with JSON-RPC's "method not found" (-32601), as a node without it answers (Hardhat's
 * node has no `eth_getBlockReceipts`), those named in `unsupported` with "method not supported"
 * (-32004), and those named in `failing` with an internal error (-32603), as a node that fails the call answers; every other call reaches `target` as sent. `calls` counts the
 * calls by method, the refused ones included.
 */
export interface RpcProxy {
  url: string;
  calls: Map<string, number>;
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
          const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
        } catch {
          response.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    close: () => new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
