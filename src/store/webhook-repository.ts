import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Db, DbDialectName } from './db.ts';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './schema.ts';

/** The events a store's endpoint can receive (docs/webhooks.md). */
export const webhookEventTypes = [
  'payment.approved', 'payment.failed', 'payment.canceled', 'reward.issued', 'reward.claimed', 'reward.canceled', 'statement.ready',
  'x402.settled', 'x402.failed',
] as const;
export type WebhookEventType = typeof webhookEventTypes[number];

/** An event as a state change reports it: `data` holds the gRPC message's fields, snake_case. */
export interface NewWebhookEvent {
  type: WebhookEventType;
  tid: string;
  data: Record<string, string>;
}

export interface WebhookEventRecord extends NewWebhookEvent {
  id: string;
  /** Epoch milliseconds. */
  createdAt: number;
}

export interface WebhookEndpointRecord {
  id: string;
  /** Null: every store (a `vixpay listen` session). */
  tid: string | null;
  url: string;
  /** Empty: every event type. */
  events: WebhookEventType[];
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: number | null;
  createdAt: number;
  /** Opted in (`--allow-private`): deliveries may connect to a private or loopback address. */
  allowPrivate: boolean;
}

/** A delivery claimed for one attempt: the event, its endpoint, the attempt's number (1 for the first). */
export interface ClaimedDelivery {
  id: string;
  attempt: number;
  /** When the event was written (epoch ms): the retry window counts from it. */
  createdAt: number;
  event: WebhookEventRecord;
  endpoint: WebhookEndpointRecord;
}

export interface DeliveryCounts {
  pending: number;
  delivered: number;
  failed: number;
}

export interface WebhookRepository {
  addEndpoint(endpoint: Omit<WebhookEndpointRecord, 'previousSecretEnc' | 'previousSecretExpiresAt'>): Promise<void>;
  listEndpoints(tid?: string): Promise<WebhookEndpointRecord[]>;
  findEndpoint(id: string): Promise<WebhookEndpointRecord | undefined>;
  /** Removes the endpoint and its undelivered deliveries; false when there was none. */
  removeEndpoint(id: string): Promise<boolean>;
  /** The new secret signs from now on; the current one keeps signing until `previousExpiresAt`. */
  rotateSecret(id: string, secretEnc: string, previousExpiresAt: number): Promise<boolean>;
  /**
   * Claims up to `limit` due deliveries for one attempt each: their due time becomes `leaseUntil`,
   * so another instance (or this one after a crash) takes them again only once the lease is over.
   */
  claimDue(now: number, leaseUntil: number, limit: number): Promise<ClaimedDelivery[]>;
  markDelivered(id: string, now: number): Promise<void>;
  /** Another attempt at `nextAttemptAt`, or `failed` (no more attempts) when it is null. */
  markAttemptFailed(id: string, error: string, nextAttemptAt: number | null, now: number): Promise<void>;
  counts(): Promise<DeliveryCounts>;
}

const parseEvents = (events: string): WebhookEventType[] => (events === '*' ? [] : events.split(',') as WebhookEventType[]);

const toEndpoint = (row: WebhookEndpointsTable): WebhookEndpointRecord => ({
  id: row.id, tid: row.tid, url: row.url, events: parseEvents(row.events), secretEnc: row.secret_enc,
  previousSecretEnc: row.previous_secret_enc,
  previousSecretExpiresAt: row.previous_secret_expires_at === null ? null : Number(row.previous_secret_expires_at),
  createdAt: Number(row.created_at),
  allowPrivate: Number(row.allow_private) === 1,
});

const toEvent = (row: { id: string; tid: string; type: string; data: string; created_at: number }): WebhookEventRecord => ({
  id: row.id, tid: row.tid, type: row.type as WebhookEventType, data: JSON.parse(row.data) as Record<string, string>, createdAt: Number(row.created_at),
});

/**
 * Writes `event` to the outbox with one pending delivery per endpoint that wants it. Call it with
 * the transaction of the state change the event reports: both are kept, or neither.
 */
export async function appendWebhookEvent(trx: Db, event: NewWebhookEvent, now: number): Promise<string> {
  const id = `evt_${randomUUID().replaceAll('-', '')}`;
  await trx.insertInto('webhook_events').values({ id, tid: event.tid, type: event.type, data: JSON.stringify(event.data), created_at: now }).execute();
  const endpoints = await trx.selectFrom('webhook_endpoints').select(['id', 'events'])
    .where((eb) => eb.or([eb('tid', '=', event.tid), eb('tid', 'is', null)])).execute();
  const wanted = endpoints.filter((e) => e.events === '*' || e.events.split(',').includes(event.type));
  if (wanted.length > 0) {
    await trx.insertInto('webhook_deliveries').values(wanted.map((endpoint) => ({
      id: randomUUID(), event_id: id, endpoint_id: endpoint.id, status: 'pending' as const, attempts: 0,
      next_attempt_at: now, last_error: null, created_at: now, updated_at: now,
    }))).execute();
  }
  return id;
}

/** Runs `change` and, when it changed something, appends `event` in the same transaction. */
export async function withWebhookEvent(db: Db, event: NewWebhookEvent | undefined, now: number, change: (trx: Db) => Promise<boolean>): Promise<boolean> {
  if (!event) return change(db);
  return db.transaction().execute(async (trx) => {
    const changed = await change(trx);
    if (changed) await appendWebhookEvent(trx, event, now);
    return changed;
  });
}

export function createWebhookRepository(db: Db, dialect: DbDialectName): WebhookRepository {
  const findEndpoint = async (id: string) => {
    const row = await db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toEndpoint(row);
  };
  return {
    async addEndpoint(e) {
      await db.insertInto('webhook_endpoints').values({
        id: e.id, tid: e.tid, url: e.url, events: e.events.length === 0 ? '*' : e.events.join(','), secret_enc: e.secretEnc,
        previous_secret_enc: null, previous_secret_expires_at: null, created_at: e.createdAt,
        allow_private: e.allowPrivate ? 1 : 0,
      }).execute();
    },
    async listEndpoints(tid) {
      let query = db.selectFrom('webhook_endpoints').selectAll().orderBy('created_at').orderBy('id');
      if (tid !== undefined) query = query.where('tid', '=', tid);
      return (await query.execute()).map(toEndpoint);
    },
    findEndpoint,
    async removeEndpoint(id) {
      return db.transaction().execute(async (trx) => {
        await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', id).where('status', '=', 'pending').execute();
        const removed = await trx.deleteFrom('webhook_endpoints').where('id', '=', id).executeTakeFirst();
        return Number(removed.numDeletedRows) === 1;
      });
    },
    async rotateSecret(id, secretEnc, previousExpiresAt) {
      const result = await db.updateTable('webhook_endpoints')
        .set((eb) => ({ previous_secret_enc: eb.ref('secret_enc'), previous_secret_expires_at: previousExpiresAt, secret_enc: secretEnc }))
        .where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async claimDue(now, leaseUntil, limit) {
      const claimed = await db.transaction().execute(async (trx) => {
        let due = trx.selectFrom('webhook_deliveries').select('id')
          .where('status', '=', 'pending').where('next_attempt_at', '<=', now).orderBy('next_attempt_at').limit(limit);
        // Several instances on one PostgreSQL each take rows no other holds; SQLite has one writer.
        if (dialect === 'postgres') due = due.forUpdate().skipLocked();
        const ids = (await due.execute()).map((r) => r.id);
        if (ids.length === 0) return [];
        await trx.updateTable('webhook_deliveries')
          .set({ next_attempt_at: leaseUntil, attempts: sql<number>`attempts + 1`, updated_at: now })
          .where('id', 'in', ids).execute();
        return trx.selectFrom('webhook_deliveries').selectAll().where('id', 'in', ids).execute();
      });
      const deliveries: ClaimedDelivery[] = [];
      for (const row of claimed as WebhookDeliveriesTable[]) {
        const [event, endpoint] = await Promise.all([
          db.selectFrom('webhook_events').selectAll().where('id', '=', row.event_id).executeTakeFirst(),
          findEndpoint(row.endpoint_id),
        ]);
        if (!event || !endpoint) continue;
        deliveries.push({ id: row.id, attempt: Number(row.attempts), createdAt: Number(row.created_at), event: toEvent(event), endpoint });
      }
      return deliveries;
    },
    async markDelivered(id, now) {
      await db.updateTable('webhook_deliveries').set({ status: 'delivered', last_error: null, updated_at: now }).where('id', '=', id).execute();
    },
    async markAttemptFailed(id, error, nextAttemptAt, now) {
      await db.updateTable('webhook_deliveries').set({
        ...(nextAttemptAt === null ? { status: 'failed' as const } : { next_attempt_at: nextAttemptAt }),
        last_error: error.slice(0, 500), updated_at: now,
      }).where('id', '=', id).where('status', '=', 'pending').execute();
    },
    async counts() {
      const rows = await db.selectFrom('webhook_deliveries').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).groupBy('status').execute();
      const counts: DeliveryCounts = { pending: 0, delivered: 0, failed: 0 };
      for (const row of rows) counts[row.status] = Number(row.n);
      return counts;
    },
  };
}
