import type { Db } from './db.ts';

/** The `fleet` table (migration 0011): one sha256 fingerprint per thing every instance must share. */
export interface FleetRepository {
  /** The stored fingerprints by name. */
  all(): Promise<Map<string, string>>;
  /** Writes `fingerprint` under `name` unless one is there already (the first instance's stays). */
  claim(name: string, fingerprint: string, now: number): Promise<void>;
  /** Replaces the fingerprint under `name` (a rotation). */
  set(name: string, fingerprint: string, now: number): Promise<void>;
}

export function createFleetRepository(db: Db): FleetRepository {
  return {
    async all() {
      const rows = await db.selectFrom('fleet').select(['name', 'fingerprint']).execute();
      return new Map(rows.map((row) => [row.name, row.fingerprint]));
    },
    async claim(name, fingerprint, now) {
      await db.insertInto('fleet').values({ name, fingerprint, updated_at: now })
        .onConflict((oc) => oc.column('name').doNothing()).execute();
    },
    async set(name, fingerprint, now) {
      await db.insertInto('fleet').values({ name, fingerprint, updated_at: now })
        .onConflict((oc) => oc.column('name').doUpdateSet({ fingerprint, updated_at: now })).execute();
    },
  };
}
