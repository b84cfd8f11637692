import type { Db } from './db.ts';
import type { JwtSigningKeysTable } from './schema.ts';

export type SigningKeyRow = JwtSigningKeysTable;

/** The `jwt_signing_keys` table (migration 0011). */
export interface SigningKeyRepository {
  /** Every key, newest first. */
  list(): Promise<SigningKeyRow[]>;
  insert(row: SigningKeyRow): Promise<void>;
  /** Retires every active key but `kid`: they verify until `verifyUntil` (ms), sign no more. */
  retireAllBut(kid: string, now: number, verifyUntil: number): Promise<void>;
}

export function createSigningKeyRepository(db: Db): SigningKeyRepository {
  return {
    list: () => db.selectFrom('jwt_signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute(),
    async insert(row) {
      await db.insertInto('jwt_signing_keys').values(row).execute();
    },
    async retireAllBut(kid, now, verifyUntil) {
      await db.updateTable('jwt_signing_keys').set({ retired_at: now, verify_until: verifyUntil })
        .where('kid', '!=', kid).where('retired_at', 'is', null).execute();
    },
  };
}
