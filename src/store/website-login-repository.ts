import type { Kysely } from 'kysely';
import type { Database, WebsiteLoginsTable } from './schema.ts';

export interface WebsiteLoginRecord {
  /** SHA-256 hex of the requestId; the id itself is never stored. */
  requestIdHash: string;
  /** What the site sent as `requestId` to auth-user-by-app (generally its URL followed by `?`). */
  site: string;
  requesterIp: string | null;
  expiresAt: number;
  userId: string | null;
  completedAt: number | null;
  consumedAt: number | null;
  cancelledAt: number | null;
  createdAt: number;
}

/**
 * The `website_logins` table. Every state change is one conditional UPDATE, so two instances (or a
 * poll racing the app's answer) can never both win: the caller learns from the boolean.
 */
export interface WebsiteLoginRepository {
  insert(record: WebsiteLoginRecord): Promise<void>;
  find(requestIdHash: string): Promise<WebsiteLoginRecord | undefined>;
  /** Pending and unexpired → completed by `userId`, readable until `readableUntil`. */
  complete(requestIdHash: string, userId: string, now: number, readableUntil: number): Promise<boolean>;
  /** Completed, unread, not cancelled and unexpired → consumed. */
  consume(requestIdHash: string, now: number): Promise<boolean>;
  /** Not yet consumed or cancelled → cancelled. */
  cancel(requestIdHash: string, now: number): Promise<boolean>;
  /** Deletes rows that expired before `before`; returns how many. */
  deleteExpired(before: number): Promise<number>;
}

function toRecord(row: WebsiteLoginsTable): WebsiteLoginRecord {
  const n = (value: number | null) => (value === null ? null : Number(value));
  return {
    requestIdHash: row.request_id_hash, site: row.site, requesterIp: row.requester_ip,
    expiresAt: Number(row.expires_at), userId: row.user_id, completedAt: n(row.completed_at),
    consumedAt: n(row.consumed_at), cancelledAt: n(row.cancelled_at), createdAt: Number(row.created_at),
  };
}

export function createWebsiteLoginRepository(db: Kysely<Database>): WebsiteLoginRepository {
  return {
    async insert(record) {
      await db.insertInto('website_logins').values({
        request_id_hash: record.requestIdHash, site: record.site, requester_ip: record.requesterIp,
        expires_at: record.expiresAt, user_id: record.userId, completed_at: record.completedAt,
        consumed_at: record.consumedAt, cancelled_at: record.cancelledAt, created_at: record.createdAt,
      }).execute();
    },
    async find(requestIdHash) {
      const row = await db.selectFrom('website_logins').selectAll().where('request_id_hash', '=', requestIdHash).executeTakeFirst();
      return row && toRecord(row);
    },
    async complete(requestIdHash, userId, now, readableUntil) {
      const result = await db.updateTable('website_logins')
        .set({ user_id: userId, completed_at: now, expires_at: readableUntil })
        .where('request_id_hash', '=', requestIdHash)
        .where('completed_at', 'is', null).where('cancelled_at', 'is', null).where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async consume(requestIdHash, now) {
      const result = await db.updateTable('website_logins').set({ consumed_at: now })
        .where('request_id_hash', '=', requestIdHash)
        .where('completed_at', 'is not', null).where('cancelled_at', 'is', null).where('consumed_at', 'is', null)
        .where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async cancel(requestIdHash, now) {
      const result = await db.updateTable('website_logins').set({ cancelled_at: now })
        .where('request_id_hash', '=', requestIdHash)
        .where('cancelled_at', 'is', null).where('consumed_at', 'is', null)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteExpired(before) {
      const result = await db.deleteFrom('website_logins').where('expires_at', '<', before).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
  };
}
