import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { DomainError } from '#shared/errors.ts';
import { addWebhookEndpoint, listWebhookEndpoints, removeWebhookEndpoint, rotateWebhookSecret } from '../webhooks/webhook-endpoints.ts';
import { signatureHeader } from '../webhooks/signature.ts';
import type { CliCommand, CliContext } from './command.ts';
import { withStoreRecords } from './command.ts';

const text = (value: string | boolean | undefined) => (typeof value === 'string' ? value : undefined);
const eventsOption = (value: string | boolean | undefined) => (text(value) ?? '').split(',').map((e) => e.trim()).filter(Boolean);

function endpointId(context: CliContext): string {
  const [id] = context.positionals;
  if (!id) throw new DomainError('request.invalid', 'the endpoint ID (we_…) is required');
  return id;
}

export const webhookAddCommand: CliCommand = {
  summary: '--tid TID --url URL [--events payment.approved,…] [--allow-private]  register a store\'s webhook endpoint (secret shown once)',
  options: { tid: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, 'allow-private': { type: 'boolean' } },
  run: async (context) => {
    const tid = text(context.values.tid);
    const url = text(context.values.url);
    if (!tid || !url) throw new DomainError('request.invalid', '--tid and --url are required');
    return withStoreRecords(context, (records) => addWebhookEndpoint(records.webhooks, {
      tid, url, events: eventsOption(context.values.events), allowPrivate: context.values['allow-private'] === true,
    }));
  },
};

export const webhookListCommand: CliCommand = {
  summary: '[--tid TID]  webhook endpoints (never their secrets)',
  options: { tid: { type: 'string' } },
  run: async (context) => withStoreRecords(context, (records) => listWebhookEndpoints(records.webhooks, text(context.values.tid))),
};

export const webhookRemoveCommand: CliCommand = {
  summary: 'ID  remove a webhook endpoint (its undelivered events are dropped)',
  options: {},
  run: async (context) => withStoreRecords(context, (records) => removeWebhookEndpoint(records.webhooks, endpointId(context))),
};

export const webhookRotateSecretCommand: CliCommand = {
  summary: 'ID  new signing secret (shown once); the old one also signs for 24 h',
  options: {},
  run: async (context) => withStoreRecords(context, (records) => rotateWebhookSecret(records.webhooks, endpointId(context))),
};

/**
 * `vixpay listen --forward-to URL`: a temporary endpoint of the running platform (every store, or
 * --tid) pointing at a local receiver of this command, which passes each event on unchanged (body
 * and Vixpay-Signature) and answers the platform with the forward target's status, so an event the
 * local app refused is retried like any other. Ctrl-C removes the endpoint.
 */
export const listenCommand: CliCommand = {
  summary: '--forward-to URL [--tid TID] [--events …]  stream a running platform\'s events to a local URL',
  options: { 'forward-to': { type: 'string' }, tid: { type: 'string' }, events: { type: 'string' } },
  run: async (context) => {
    const forwardTo = text(context.values['forward-to']);
    if (!forwardTo) throw new DomainError('request.invalid', '--forward-to is required');
    const server = http.createServer((request, response) => {
      void forward(forwardTo, request).then(({ status, line }) => {
        console.log(line);
        response.writeHead(status).end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    const endpoint = await withStoreRecords(context, (records) => addWebhookEndpoint(records.webhooks, {
      // This command's own receiver, on this machine.
      tid: text(context.values.tid) ?? null, url: `http://127.0.0.1:${port}/`, events: eventsOption(context.values.events), allowPrivate: true,
    }));
    console.log(`Ready: forwarding ${endpoint.tid ? `store ${endpoint.tid}'s` : 'every store\'s'} events to ${forwardTo}`);
    console.log(`Signing secret of this session: ${endpoint.secret}  (endpoint ${endpoint.id}; Ctrl-C to stop)`);
    await Promise.race(['SIGINT', 'SIGTERM'].map((signal) => once(process, signal)));
    server.close();
    await withStoreRecords(context, (records) => removeWebhookEndpoint(records.webhooks, endpoint.id));
    return undefined;
  },
};

async function forward(url: string, request: http.IncomingMessage): Promise<{ status: number; line: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString('utf8');
  let label = 'event';
  try {
    const event = JSON.parse(body) as { id?: string; type?: string };
    label = `${event.type ?? '?'} ${event.id ?? '?'}`;
  } catch { /* forwarded as received */ }
  const signature = request.headers[signatureHeader.toLowerCase()];
  try {
    const answer = await fetch(url, {
      method: 'POST', body,
      headers: { 'content-type': 'application/json', ...(typeof signature === 'string' && { [signatureHeader]: signature }) },
      signal: AbortSignal.timeout(10_000),
    });
    await answer.body?.cancel().catch(() => undefined);
    return { status: answer.status, line: `${new Date().toISOString()}  ${label}  -> ${answer.status}` };
  } catch (error) {
    // 502 to the platform: it retries the event with backoff, as for any receiver that is down.
    return { status: 502, line: `${new Date().toISOString()}  ${label}  -> ${url} unreachable (${(error as Error).message})` };
  }
}
