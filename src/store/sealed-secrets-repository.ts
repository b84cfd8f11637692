import { sql } from 'kysely';
import type { Db } from './db.ts';

/**
 * Every column holding a secret sealed by the key vault, by its table's primary key (the wallets'
 * private keys are not here: they are wrapped, not sealed, src/store/wallet-repository.ts).
 */
const sealedColumns = [
  { table: 'jwt_signing_keys', key: 'kid', column: 'private_jwk_enc', what: 'JWT signing key' },
  { table: 'did_private_keys', key: 'alias', column: 'private_key_enc', what: 'DID key' },
  { table: 'accounts', key: 'address', column: 'secret_key_enc', what: 'wallet secret key' },
  { table: 'webhook_endpoints', key: 'id', column: 'secret_enc', what: 'webhook secret' },
  { table: 'webhook_endpoints', key: 'id', column: 'previous_secret_enc', what: 'webhook previous secret' },
] as const;

export type SealedColumn = (typeof sealedColumns)[number];

/** One sealed secret: where it is, and its stored form. */
export interface SealedSecret {
  column: SealedColumn;
  id: string;
  sealed: string;
}

export interface SealedSecretsRepository {
  /** The secrets of every sealed column whose stored form does not start with `settled`, `limit` at a time after `after` (by column, then id). */
  listNotIn(settled: string, column: SealedColumn, after: string, limit: number): Promise<SealedSecret[]>;
  /** Replaces a stored form only if it still is `from` (compare and swap): false when it changed meanwhile. */
  replace(secret: SealedSecret, to: string): Promise<boolean>;
  /** How many stored forms, in every sealed column, do not start with `settled`. */
  countNotIn(settled: string): Promise<number>;
  readonly columns: readonly SealedColumn[];
}

export function createSealedSecretsRepository(db: Db): SealedSecretsRepository {
  // A prefix match without LIKE's wildcards: substr of its length (as the wallets' keys are matched).
  const notIn = (column: SealedColumn, settled: string) => sql<boolean>`${sql.ref(column.column)} is not null and substr(${sql.ref(column.column)}, 1, ${settled.length}) <> ${settled}`;
  return {
    columns: sealedColumns,
    async listNotIn(settled, column, after, limit) {
      const rows = await sql<{ id: string; sealed: string }>`select ${sql.ref(column.key)} as id, ${sql.ref(column.column)} as sealed from ${sql.table(column.table)}
        where ${notIn(column, settled)} and ${sql.ref(column.key)} > ${after} order by ${sql.ref(column.key)} limit ${limit}`.execute(db);
      return rows.rows.map((row) => ({ column, id: row.id, sealed: row.sealed }));
    },
    async replace({ column, id, sealed }, to) {
      const result = await sql`update ${sql.table(column.table)} set ${sql.ref(column.column)} = ${to}
        where ${sql.ref(column.key)} = ${id} and ${sql.ref(column.column)} = ${sealed}`.execute(db);
      return Number(result.numAffectedRows ?? 0) === 1;
    },
    async countNotIn(settled) {
      let count = 0;
      for (const column of sealedColumns) {
        const row = await sql<{ n: string | number }>`select count(*) as n from ${sql.table(column.table)} where ${notIn(column, settled)}`.execute(db);
        count += Number(row.rows[0]?.n ?? 0);
      }
      return count;
    },
  };
}
