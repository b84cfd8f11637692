import type { Db } from './db.ts';
import type { FacilitatorKeysTable } from './schema.ts';

/** A resource server's key to the x402 facilitator, as listed (never the key itself). */
export interface FacilitatorKeyRecord {
  id: string;
  name: string;
  /** The store whose webhook endpoints receive this key's `x402.*` events; null: none. */
  tid: string | null;
  ratePerSecond: number;
  createdAt: number;
  revokedAt: number | null;
}

export interface FacilitatorKeyRepository {
  insert(record: FacilitatorKeyRecord & { keyHash: string }): Promise<void>;
  /** The key with this SHA-256, revoked or not. */
  findByHash(keyHash: string): Promise<FacilitatorKeyRecord | undefined>;
  find(id: string): Promise<FacilitatorKeyRecord | undefined>;
  list(): Promise<FacilitatorKeyRecord[]>;
  /** False when there is no such key or it was revoked already. */
  revoke(id: string, now: number): Promise<boolean>;
}

const toRecord = (row: FacilitatorKeysTable): FacilitatorKeyRecord => ({
  id: row.id, name: row.name, tid: row.tid, ratePerSecond: Number(row.rate_per_second), createdAt: Number(row.created_at),
  revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
});

export function createFacilitatorKeyRepository(db: Db): FacilitatorKeyRepository {
  return {
    async insert(r) {
      await db.insertInto('facilitator_keys').values({
        id: r.id, name: r.name, key_hash: r.keyHash, tid: r.tid, rate_per_second: r.ratePerSecond, created_at: r.createdAt, revoked_at: r.revokedAt,
      }).execute();
    },
    async findByHash(keyHash) {
      const row = await db.selectFrom('facilitator_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
      return row && toRecord(row);
    },
    async find(id) {
      const row = await db.selectFrom('facilitator_keys').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async list() {
      return (await db.selectFrom('facilitator_keys').selectAll().orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },
    async revoke(id, now) {
      const result = await db.updateTable('facilitator_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
