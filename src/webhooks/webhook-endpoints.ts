import { randomBytes } from 'node:crypto';
import type { Clock } from '#shared/clock.ts';
import { DomainError } from '#shared/errors.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import { webhookEventTypes, type WebhookEndpointRecord, type WebhookEventType, type WebhookRepository } from '../store/webhook-repository.ts';
import { checkedAddresses, PrivateAddressError, systemLookup, type HostLookup } from './webhook-address.ts';

/** How long the secret before a rotation keeps signing deliveries. */
export const rotationOverlapMs = 24 * 60 * 60 * 1000;

export interface WebhookEndpointDeps {
  webhooks: Pick<WebhookRepository, 'addEndpoint' | 'listEndpoints' | 'findEndpoint' | 'removeEndpoint' | 'rotateSecret'>;
  merchants: Pick<MerchantRepository, 'findStore'>;
  vault: Pick<KeyVault, 'encrypt'>;
  clock: Clock;
  /** How host names resolve: `dns.lookup` unless a test resolves its own names. */
  lookup?: HostLookup | undefined;
}

/** An endpoint as the operator sees it: never its secret. */
export interface WebhookEndpointView {
  id: string;
  tid: string | null;
  url: string;
  /** `*`: every event type. */
  events: string[];
  createdAt: string;
  /** Until when the previous secret still signs, after a rotation. */
  previousSecretExpiresAt?: string;
  /** Present (true) only when opted in to private addresses (`--allow-private`). */
  allowPrivate?: true;
}

export interface NewEndpointRequest {
  /** Null only for a `vixpay listen` session: every store's events. */
  tid: string | null;
  url: string;
  /** Empty: every event type. */
  events: string[];
  /**
   * Deliveries may go to a loopback, private or link-local address (a back office on this machine
   * or on the operator's own network). Without it, public addresses only.
   */
  allowPrivate?: boolean;
}

const newSecret = () => `whsec_${randomBytes(32).toString('base64url')}`;
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

function checkUrl(url: string): URL {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new DomainError('request.invalid', '--url is not a URL', { details: 'url' });
  }
  // Events carry payment data: https, except to this machine (a back office under development).
  const local = parsed.protocol === 'http:' && loopbackHosts.has(parsed.hostname);
  if (parsed.protocol !== 'https:' && !local) throw new DomainError('request.invalid', '--url must be https:// (http:// only to localhost)', { details: 'url' });
  if (parsed.username || parsed.password) throw new DomainError('request.invalid', '--url must not carry credentials', { details: 'url' });
  return parsed;
}

/**
 * Without `--allow-private`, a URL whose host is (or resolves to) anything but public addresses is
 * refused. A name that does not resolve now is taken: every delivery checks the address it connects
 * to (webhook-delivery.ts), so it can never reach a private one later either.
 */
async function checkAddress(url: URL, lookup: HostLookup): Promise<void> {
  try {
    await checkedAddresses(url.hostname, lookup);
  } catch (error) {
    if (!(error instanceof PrivateAddressError) || /resolves to no address/.test(error.message)) return;
    throw new DomainError('request.invalid', `--url ${url.origin}: ${error.message}; deliveries go to public addresses only, unless --allow-private`, { details: 'url' });
  }
}

function checkEvents(events: string[]): WebhookEventType[] {
  const unknown = events.filter((e) => !(webhookEventTypes as readonly string[]).includes(e));
  if (unknown.length > 0) throw new DomainError('request.invalid', `unknown event type ${unknown.join(', ')} (one of ${webhookEventTypes.join(', ')})`, { details: 'events' });
  return [...new Set(events)] as WebhookEventType[];
}

export function viewOf(endpoint: WebhookEndpointRecord, now: number): WebhookEndpointView {
  return {
    id: endpoint.id, tid: endpoint.tid, url: endpoint.url, events: endpoint.events.length === 0 ? ['*'] : endpoint.events,
    createdAt: new Date(endpoint.createdAt).toISOString(),
    ...(endpoint.allowPrivate && { allowPrivate: true as const }),
    ...(endpoint.previousSecretExpiresAt !== null && endpoint.previousSecretExpiresAt > now
      && { previousSecretExpiresAt: new Date(endpoint.previousSecretExpiresAt).toISOString() }),
  };
}

/** Registers an endpoint; answers its signing secret, the only time it is shown. */
export async function addWebhookEndpoint(deps: WebhookEndpointDeps, request: NewEndpointRequest): Promise<WebhookEndpointView & { secret: string }> {
  if (request.tid !== null && !(await deps.merchants.findStore(request.tid))) throw new DomainError('request.not_found', `no store ${request.tid}`, { details: 'tid' });
  const url = checkUrl(request.url);
  const events = checkEvents(request.events);
  const allowPrivate = request.allowPrivate === true;
  if (!allowPrivate) await checkAddress(url, deps.lookup ?? systemLookup);
  const secret = newSecret();
  const endpoint = {
    id: `we_${randomBytes(12).toString('hex')}`, tid: request.tid, url: url.toString(), events, secretEnc: deps.vault.encrypt(secret), createdAt: deps.clock(), allowPrivate,
  };
  await deps.webhooks.addEndpoint(endpoint);
  return { ...viewOf({ ...endpoint, previousSecretEnc: null, previousSecretExpiresAt: null }, endpoint.createdAt), secret };
}

export async function listWebhookEndpoints(deps: WebhookEndpointDeps, tid?: string): Promise<WebhookEndpointView[]> {
  const now = deps.clock();
  return (await deps.webhooks.listEndpoints(tid)).map((endpoint) => viewOf(endpoint, now));
}

/** Removes an endpoint; deliveries not made yet are dropped with it. */
export async function removeWebhookEndpoint(deps: WebhookEndpointDeps, id: string): Promise<{ id: string; removed: true }> {
  if (!(await deps.webhooks.removeEndpoint(id))) throw new DomainError('request.not_found', `no webhook endpoint ${id}`, { details: 'id' });
  return { id, removed: true };
}

/**
 * A new signing secret, shown once. Deliveries are signed with it at once, and for 24 hours with
 * the previous one too (a second `v1=`), so the receiver can switch without losing an event.
 */
export async function rotateWebhookSecret(deps: WebhookEndpointDeps, id: string): Promise<WebhookEndpointView & { secret: string }> {
  const secret = newSecret();
  const now = deps.clock();
  if (!(await deps.webhooks.rotateSecret(id, deps.vault.encrypt(secret), now + rotationOverlapMs))) {
    throw new DomainError('request.not_found', `no webhook endpoint ${id}`, { details: 'id' });
  }
  const endpoint = await deps.webhooks.findEndpoint(id);
  if (!endpoint) throw new DomainError('request.not_found', `no webhook endpoint ${id}`, { details: 'id' });
  return { ...viewOf(endpoint, now), secret };
}
