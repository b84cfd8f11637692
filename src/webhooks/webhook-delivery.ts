import http from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Logger } from '#shared/logger.ts';
import type { ClaimedDelivery, WebhookEventRecord, WebhookRepository } from '../store/webhook-repository.ts';
import { nextAttemptAt, type BackoffPolicy } from './backoff.ts';
import { signatureHeader, signatureHeaderValue } from './signature.ts';
import { bareHost, guardedLookup, isPublicAddress, PrivateAddressError, systemLookup, type HostLookup } from './webhook-address.ts';
import type { WebhookMetrics } from './webhook-metrics.ts';

/** res_code and res_message of a failure's domain code (the gRPC transport's payment table). */
export type ResCodeOf = (failureCode: string) => { res_code: string; res_message: string };

export interface WebhookDeliveryDeps {
  repository: Pick<WebhookRepository, 'claimDue' | 'markDelivered' | 'markAttemptFailed'>;
  vault: Pick<KeyVault, 'decrypt'>;
  clock: Clock;
  logger: Logger;
  policy: BackoffPolicy;
  /** One attempt's time limit (connect, send, answer). */
  timeoutMs: number;
  /** Deliveries attempted at once by this instance. */
  batchSize: number;
  resCodeOf: ResCodeOf;
  metrics?: WebhookMetrics | undefined;
  /** How host names resolve: `dns.lookup` unless a test resolves its own names. */
  lookup?: HostLookup | undefined;
}

interface PostRequest {
  body: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  /** The endpoint was opted in (`--allow-private`): any address. */
  allowPrivate: boolean;
  lookup: HostLookup;
}

/**
 * POSTs `body` and answers the status. Unless the endpoint is opted in, the connection goes only to
 * a public address: a literal is checked as it is, a name is resolved once, every address checked,
 * and the socket connects to a checked one (`guardedLookup`). A new connection each time (no pooled
 * socket another endpoint opened), no redirect followed.
 */
export function postWebhook(url: string, request: PostRequest): Promise<number> {
  const target = new URL(url);
  const host = bareHost(target.hostname);
  if (!request.allowPrivate && isIP(host) && !isPublicAddress(host)) {
    return Promise.reject(new PrivateAddressError(`${host} is not a public address`));
  }
  const transport = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const outgoing = transport.request(target, {
      method: 'POST', agent: false, signal: request.signal,
      headers: { ...request.headers, 'content-length': String(Buffer.byteLength(request.body)) },
      ...(request.allowPrivate
        ? request.lookup !== systemLookup && { lookup: guardedLookupAny(request.lookup) }
        : { lookup: guardedLookup(request.lookup) }),
    }, (response) => {
      resolve(response.statusCode ?? 0);
      response.destroy();
    });
    outgoing.on('error', reject);
    outgoing.end(request.body);
  });
}

/** A test's resolver for an opted-in endpoint: any address. */
function guardedLookupAny(lookup: HostLookup): ReturnType<typeof guardedLookup> {
  return (hostname, options, callback) => {
    lookup(hostname).then((addresses) => {
      if (options.all) callback(null, addresses);
      else callback(null, addresses[0]?.address ?? '', addresses[0]?.family ?? 4);
    }, (error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}

/** The body a receiver gets: `{id, type, created, data}`, `created` in unix seconds. */
export function eventBody(event: WebhookEventRecord, resCodeOf: ResCodeOf): string {
  const { failure_code: failureCode, ...data } = event.data;
  return JSON.stringify({
    id: event.id, type: event.type, created: Math.floor(event.createdAt / 1000),
    data: failureCode === undefined ? data : { ...data, failure_code: failureCode, ...resCodeOf(failureCode) },
  });
}

/**
 * The outbox's sender. Each run claims due deliveries (a lease: another instance, or this one after
 * a crash, takes a delivery again only once the lease has passed), POSTs each signed event, and
 * records the outcome: a 2xx answer delivers it; anything else schedules the next attempt with
 * exponential backoff until 24 hours after the event, then gives it up. At least once: a receiver
 * de-duplicates by the event's `id`.
 */
export function createWebhookDelivery(deps: WebhookDeliveryDeps) {
  const stopping = new AbortController();
  // A lease outlasts one attempt with a margin: never two instances on one delivery at once.
  const leaseMs = deps.timeoutMs + 30_000;

  const secretsOf = (delivery: ClaimedDelivery, now: number): string[] => {
    const { endpoint } = delivery;
    const secrets = [deps.vault.decrypt(endpoint.secretEnc)];
    if (endpoint.previousSecretEnc && (endpoint.previousSecretExpiresAt ?? 0) > now) secrets.push(deps.vault.decrypt(endpoint.previousSecretEnc));
    return secrets;
  };

  const attempt = async (delivery: ClaimedDelivery): Promise<void> => {
    const body = eventBody(delivery.event, deps.resCodeOf);
    const sentAt = deps.clock();
    let failure: string;
    try {
      const status = await postWebhook(delivery.endpoint.url, {
        body, allowPrivate: delivery.endpoint.allowPrivate, lookup: deps.lookup ?? systemLookup,
        headers: {
          'content-type': 'application/json', 'user-agent': 'vixpay-webhooks/1',
          [signatureHeader]: signatureHeaderValue(secretsOf(delivery, sentAt), Math.floor(sentAt / 1000), body),
        },
        signal: AbortSignal.any([stopping.signal, AbortSignal.timeout(deps.timeoutMs)]),
      });
      if (status >= 200 && status < 300) {
        await deps.repository.markDelivered(delivery.id, deps.clock());
        deps.metrics?.deliveries.inc({ outcome: 'delivered' });
        return;
      }
      failure = `HTTP ${status}`;
    } catch (error) {
      failure = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
    }
    const now = deps.clock();
    // Cut short by a shutdown: due again at once (for the next instance up), not after a backoff.
    const next = stopping.signal.aborted ? now : nextAttemptAt(deps.policy, delivery.attempt, delivery.createdAt, now);
    await deps.repository.markAttemptFailed(delivery.id, failure, next, now);
    deps.metrics?.deliveries.inc({ outcome: next === null ? 'gave_up' : 'retry' });
    const log = { eventId: delivery.event.id, endpointId: delivery.endpoint.id, attempt: delivery.attempt, failure };
    if (next === null) deps.logger.warn(log, 'webhook delivery given up after 24 hours');
    else deps.logger.info({ ...log, nextAttemptAt: new Date(next).toISOString() }, 'webhook delivery failed; will retry');
  };

  return {
    /** Attempts every due delivery (batch after batch); answers how many were attempted. */
    async runOnce(): Promise<number> {
      let attempted = 0;
      while (!stopping.signal.aborted) {
        const now = deps.clock();
        const batch = await deps.repository.claimDue(now, now + leaseMs, deps.batchSize);
        await Promise.all(batch.map((delivery) => attempt(delivery).catch((err: unknown) => {
          deps.logger.error({ err, deliveryId: delivery.id }, 'webhook delivery could not be recorded');
        })));
        attempted += batch.length;
        if (batch.length < deps.batchSize) break;
      }
      return attempted;
    },
    /** Cuts attempts in flight short (they are due again at once); the caller then awaits its loop. */
    abort(): void { stopping.abort(); },
  };
}

export type WebhookDelivery = ReturnType<typeof createWebhookDelivery>;
