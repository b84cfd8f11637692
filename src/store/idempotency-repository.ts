import type { Db } from './db.ts';
import type { IdempotencyKeyState } from './schema.ts';

/** An idempotency key of a caller's scope and what it stands for. */
export interface IdempotencyKeyRecord {
  /** Whose key it is: `pay:<userId>`, `pos:<tid>:<call>`. */
  scope: string;
  key: string;
  /** sha256 hex of the request's parameters. */
  fingerprint: string;
  state: IdempotencyKeyState;
  /** The operation's transfer reference, when it has one. */
  reference: string | null;
  /** JSON of the outcome (done, pending). */
  outcome: string | null;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

export type NewIdempotencyKey = Pick<IdempotencyKeyRecord, 'scope' | 'key' | 'fingerprint' | 'reference' | 'createdAt' | 'expiresAt'>;

/** Idempotency keys. (scope, key) is unique: of concurrent claims of one key exactly one wins. */
export interface IdempotencyRepository {
  /** Inserts the key as `running`, or answers the record that holds it (an expired one is swept first). */
  claim(key: NewIdempotencyKey): Promise<{ claimed: true } | { claimed: false; existing: IdempotencyKeyRecord }>;
  /** Takes over a `running` key last updated at `updatedAt` (compare-and-set), with a new reference. */
  retake(scope: string, key: string, updatedAt: number, reference: string, now: number): Promise<boolean>;
  /** Records the outcome: `done` (final) or `pending` (the chain has not settled it yet). */
  record(scope: string, key: string, state: Exclude<IdempotencyKeyState, 'running'>, outcome: string, now: number): Promise<void>;
  /** Frees a key whose operation never started (nothing happened): the next request with it runs. */
  release(scope: string, key: string): Promise<void>;
  /** Deletes every key past its expiry; answers how many. */
  sweepExpired(now: number): Promise<number>;
  /** The record holding the key, expired or not; undefined when none does. */
  find(scope: string, key: string): Promise<IdempotencyKeyRecord | undefined>;
}

export function createIdempotencyRepository(db: Db): IdempotencyRepository {
  const find = async (scope: string, key: string): Promise<IdempotencyKeyRecord | undefined> => {
    const row = await db.selectFrom('idempotency_keys').selectAll().where('scope', '=', scope).where('idem_key', '=', key).executeTakeFirst();
    return row && {
      scope: row.scope, key: row.idem_key, fingerprint: row.fingerprint, state: row.state, reference: row.reference, outcome: row.outcome,
      createdAt: Number(row.created_at), updatedAt: Number(row.updated_at), expiresAt: Number(row.expires_at),
    };
  };
  return {
    async claim(k) {
      for (;;) {
        const inserted = await db.insertInto('idempotency_keys').values({
          scope: k.scope, idem_key: k.key, fingerprint: k.fingerprint, state: 'running', reference: k.reference, outcome: null,
          created_at: k.createdAt, updated_at: k.createdAt, expires_at: k.expiresAt,
        }).onConflict((oc) => oc.columns(['scope', 'idem_key']).doNothing()).executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { claimed: true };
        const existing = await find(k.scope, k.key);
        if (!existing) continue;
        if (existing.expiresAt > k.createdAt) return { claimed: false, existing };
        await db.deleteFrom('idempotency_keys').where('scope', '=', k.scope).where('idem_key', '=', k.key)
          .where('expires_at', '=', existing.expiresAt).execute();
      }
    },
    async retake(scope, key, updatedAt, reference, now) {
      const result = await db.updateTable('idempotency_keys').set({ reference, updated_at: now })
        .where('scope', '=', scope).where('idem_key', '=', key).where('state', '=', 'running').where('updated_at', '=', updatedAt)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async record(scope, key, state, outcome, now) {
      await db.updateTable('idempotency_keys').set({ state, outcome, updated_at: now })
        .where('scope', '=', scope).where('idem_key', '=', key).execute();
    },
    async release(scope, key) {
      await db.deleteFrom('idempotency_keys').where('scope', '=', scope).where('idem_key', '=', key).where('state', '=', 'running').execute();
    },
    async sweepExpired(now) {
      const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    find,
  };
}
