import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The raw body as sent: what the signature covers. */
  body: string;
  event: { id: string; type: string; created: number; data: Record<string, string> };
  signature: string;
}

/**
 * A store's back office as a real HTTP server (node:http) on 127.0.0.1: it records every POST and
 * answers 200, or `status` while set. `close()` takes it off the network (connections refused) and
 * `open()` brings it back on the same port, as a back office that was down and returns.
 */
export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Each event id once, in arrival order. */
  ids(): string[];
  status: number;
  open(): Promise<void>;
  close(): Promise<void>;
}

export async function startWebhookReceiver(path = '/hooks/vixpay'): Promise<WebhookReceiver> {
  let server: http.Server | undefined;
  let port = 0;
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    status: 200,
    ids: () => [...new Set(receiver.received.map((r) => r.event.id))],
    async open() {
      server = http.createServer((request, response) => {
        const chunks: Buffer[] = [];
        request.on('data', (chunk: Buffer) => chunks.push(chunk));
        request.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          if (receiver.status === 200) {
            receiver.received.push({ body, event: JSON.parse(body), signature: String(request.headers['vixpay-signature'] ?? '') });
          }
          response.writeHead(receiver.status, { connection: 'close' }).end();
        });
      });
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
      port = (server.address() as AddressInfo).port;
      receiver.url = `http://127.0.0.1:${port}${path}`;
    },
    async close() {
      if (!server) return;
      const closing = server;
      server = undefined;
      closing.closeAllConnections();
      await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
  await receiver.open();
  return receiver;
}
