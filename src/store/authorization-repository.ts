import type { Transaction } from 'kysely';
import type { Db } from './db.ts';
import type { AuthorizationStatus, AuthorizationsTable, Database } from './schema.ts';

export type AuthorizationRecord = AuthorizationsTable;

/** Statuses whose authorization may still execute on chain: their value is held on the account. */
export const openAuthorizationStatuses = ['reserved', 'submitted'] as const satisfies readonly AuthorizationStatus[];

export interface ReserveHooks {
  /** Runs first in the reserving transaction (e.g. consumes a temp key); throwing reserves nothing. */
  before?: (trx: Transaction<Database>) => Promise<void>;
  /** Whether the account can cover the new value on top of `held`, what its open authorizations hold. */
  covers: (held: bigint) => Promise<boolean>;
}

/** EIP-3009 authorizations of custodial accounts: nonces, held funds, outcomes. */
export interface AuthorizationRepository {
  /**
   * Inserts a `reserved` authorization if the account covers it, in one transaction that holds the
   * account's row lock, so that concurrent reservations of one account are decided one at a time.
   * Answers `insufficient` (nothing written) or `duplicate` when the nonce or reference exists.
   */
  reserve(record: Omit<AuthorizationRecord, 'status' | 'tx_hash' | 'cancel_tx_hash'>, hooks: ReserveHooks): Promise<'reserved' | 'insufficient' | 'duplicate'>;
  /** `reserved` -> `submitted` inside the relayer's journaling transaction; false if it was not reserved. */
  markSubmitted(trx: Transaction<Database>, nonce: string, txHash: string, now: number): Promise<boolean>;
  /** Ends an open authorization; false if it had already ended. */
  finish(nonce: string, status: Exclude<AuthorizationStatus, 'reserved' | 'submitted'>, fields: { tx_hash?: string; cancel_tx_hash?: string }, now: number): Promise<boolean>;
  find(nonce: string): Promise<AuthorizationRecord | undefined>;
  findByReference(network: string, reference: string): Promise<AuthorizationRecord | undefined>;
  /** Open authorizations of a network whose validity ended before `validBefore` (Unix seconds). */
  listOpenExpired(network: string, before: number): Promise<AuthorizationRecord[]>;
}

export function createAuthorizationRepository(db: Db): AuthorizationRepository {
  return {
    async reserve(record, hooks) {
      class Refused extends Error {
        readonly outcome: 'insufficient' | 'duplicate';
        constructor(outcome: 'insufficient' | 'duplicate') { super(outcome); this.outcome = outcome; }
      }
      try {
        await db.transaction().execute(async (trx) => {
          await hooks.before?.(trx);
          // A no-op update takes the account row's write lock (PostgreSQL) or the database's
          // (SQLite): the read of held funds below cannot interleave with another reservation.
          await trx.updateTable('accounts').set((eb) => ({ address: eb.ref('address') }))
            .where('address', '=', record.from_address).execute();
          const taken = await trx.selectFrom('authorizations').select('nonce')
            .where((eb) => eb.or([eb('nonce', '=', record.nonce), eb.and([eb('network', '=', record.network), eb('reference', '=', record.reference)])]))
            .executeTakeFirst();
          if (taken) throw new Refused('duplicate');
          const open = await trx.selectFrom('authorizations').select('value')
            .where('network', '=', record.network).where('contract_address', '=', record.contract_address)
            .where('from_address', '=', record.from_address).where('status', 'in', openAuthorizationStatuses)
            .execute();
          const held = open.reduce((sum, row) => sum + BigInt(row.value), 0n);
          if (!(await hooks.covers(held))) throw new Refused('insufficient');
          await trx.insertInto('authorizations').values({ ...record, status: 'reserved', tx_hash: null, cancel_tx_hash: null }).execute();
        });
        return 'reserved';
      } catch (error) {
        if (error instanceof Refused) return error.outcome;
        throw error;
      }
    },
    async markSubmitted(trx, nonce, txHash, now) {
      const result = await trx.updateTable('authorizations').set({ status: 'submitted', tx_hash: txHash, updated_at: now })
        .where('nonce', '=', nonce).where('status', '=', 'reserved').executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async finish(nonce, status, fields, now) {
      const result = await db.updateTable('authorizations').set({ status, ...fields, updated_at: now })
        .where('nonce', '=', nonce).where('status', 'in', openAuthorizationStatuses).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async find(nonce) {
      return db.selectFrom('authorizations').selectAll().where('nonce', '=', nonce).executeTakeFirst();
    },
    async findByReference(network, reference) {
      return db.selectFrom('authorizations').selectAll().where('network', '=', network).where('reference', '=', reference).executeTakeFirst();
    },
    async listOpenExpired(network, before) {
      return db.selectFrom('authorizations').selectAll()
        .where('network', '=', network).where('status', 'in', openAuthorizationStatuses).where('valid_before', '<', before)
        .orderBy('created_at').execute();
    },
  };
}
