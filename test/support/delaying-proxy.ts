import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * A JSON-RPC node as a provider's bad minute shows it: every call reaches `target` and its answer
 * comes back `delayMs` later (0 until set). `inFlight` counts the calls being held right now.
 */
export interface DelayingProxy {
  url: string;
  delayMs: number;
  inFlight: number;
  /** Calls answered so far. */
  answered: number;
  close(): Promise<void>;
}

export async function startDelayingProxy(target: string): Promise<DelayingProxy> {
  const proxy: DelayingProxy = { url: '', delayMs: 0, inFlight: 0, answered: 0, close: async () => undefined };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      proxy.inFlight++;
      void (async () => {
        try {
          const delay = proxy.delayMs;
          if (delay > 0) await sleep(delay);
          const answer = await fetch(target, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.concat(chunks) });
          response.writeHead(answer.status, { 'content-type': 'application/json' }).end(Buffer.from(await answer.arrayBuffer()));
        } catch {
          response.destroy();
        } finally {
          proxy.inFlight--;
          proxy.answered++;
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
