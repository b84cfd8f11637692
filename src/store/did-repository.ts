import type { Db } from './db.ts';

/** What a system DID is for: signing credentials (`issuer`) or receiving presentations (`verifier`). */
export type SystemDidRole = 'issuer' | 'verifier';

/** An entry of `GET /did/issuers` and `GET /did/verifiers`. */
export interface DidListEntry {
  alias: string;
  did: string;
}

/** Our additions to Veramo's tables: system DID roles and used login presentations. */
export interface DidRepository {
  listByRole(role: SystemDidRole): Promise<DidListEntry[]>;
  setRole(did: string, role: SystemDidRole): Promise<void>;
  /** True for a DID in our store (whose key we hold). */
  exists(did: string): Promise<boolean>;
  /**
   * Records a presentation as used; false when it already was (a replay). Rows past their
   * `expiresAt` are removed by `deleteExpiredPresentations`: an expired VP is refused anyway.
   */
  markPresentationUsed(entry: { jwtHash: string; holderDid: string; expiresAt: number }, now: number): Promise<boolean>;
  deleteExpiredPresentations(now: number): Promise<void>;
}

export function createDidRepository(db: Db): DidRepository {
  return {
    async listByRole(role) {
      const rows = await db.selectFrom('dids').select(['did', 'alias']).where('role', '=', role).orderBy('created_at').execute();
      return rows.map((row) => ({ alias: row.alias ?? '', did: row.did }));
    },
    async setRole(did, role) {
      await db.updateTable('dids').set({ role }).where('did', '=', did).execute();
    },
    async exists(did) {
      return (await db.selectFrom('dids').select('did').where('did', '=', did).executeTakeFirst()) !== undefined;
    },
    async markPresentationUsed(entry, now) {
      const result = await db.insertInto('used_presentations')
        .values({ jwt_hash: entry.jwtHash, holder_did: entry.holderDid, expires_at: entry.expiresAt, used_at: now })
        .onConflict((oc) => oc.column('jwt_hash').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async deleteExpiredPresentations(now) {
      await db.deleteFrom('used_presentations').where('expires_at', '<', now).execute();
    },
  };
}
