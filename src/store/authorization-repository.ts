import type { Selectable, Transaction } from 'kysely';
import type { Db } from './db.ts';
import type { AuthorizationStatus, AuthorizationsTable, Database } from './schema.ts';

/** An EIP-3009 authorization of a custodial account, as the wallet sees it. */
export interface AuthorizationRecord {
  /**
   * The row's key: `authorizationKey` (network, token, payer, nonce) of an outside payer's and of a
   * custodial account's counter nonce (`reserveCounted`); the bytes32 0x-hex nonce itself of the
   * platform's earlier authorizations (derived from network and reference).
   */
  nonce: string;
  /** The EIP-3009 nonce on chain when the row's key is not the nonce; read rows always have it. */
  chainNonce?: string;
  network: string;
  /** The operation it belongs to, unique per network. */
  reference: string;
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
  /** Base units. */
  value: string;
  /** Unix seconds. */
  validBefore: number;
  /** A block at or before its signature: where a search for its events starts. */
  fromBlock: number;
  status: AuthorizationStatus;
  txHash: string | null;
  cancelTxHash: string | null;
  createdAt: number;
  updatedAt: number;
}

const toRecord = (row: Selectable<AuthorizationsTable>): AuthorizationRecord => ({
  nonce: row.nonce, network: row.network, reference: row.reference, contractAddress: row.contract_address, fromAddress: row.from_address,
  chainNonce: row.chain_nonce ?? row.nonce, toAddress: row.to_address, value: row.value, validBefore: Number(row.valid_before), fromBlock: Number(row.from_block), status: row.status,
  txHash: row.tx_hash, cancelTxHash: row.cancel_tx_hash, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
});

/** Statuses whose authorization may still execute on chain: their value is held on the account. */
export const openAuthorizationStatuses = ['reserved', 'submitted'] as const satisfies readonly AuthorizationStatus[];

export interface ReserveHooks {
  /** A temp key (its hash) spent by this reservation: used up in the same transaction, or nothing is reserved. */
  consumeTempKey?: string;
  /**
   * The account's balance in the token, read from the node. Called before any lock is taken or any
   * transaction begun, so a slow node holds neither a connection nor another reservation.
   */
  balance: () => Promise<bigint>;
}

/**
 * How far back a reservation looks for authorizations that ended `used`: one marked used after the
 * balance was read may not show in it yet and counts as held; one already used before the read
 * (its receipt was seen, so the block is in the balance) does not count twice. A minute covers the
 * clocks of instances that disagree a little and a node read that took its whole deadline.
 */
const recentlyUsedWindowMs = 60_000;

/** EIP-3009 authorizations of custodial accounts: nonces, held funds, outcomes. */
export interface AuthorizationRepository {
  /**
   * Inserts a `reserved` authorization if the account covers it; concurrent reservations of one
   * account are decided one at a time (see `AccountLocking`).
   * Answers (nothing written) `temp_key_used` when the temp key was already used or expired,
   * `insufficient`, or `duplicate` when the nonce or reference exists. (The relayer's journal marks
   * it `submitted`.)
   */
  reserve(record: Omit<AuthorizationRecord, 'status' | 'txHash' | 'cancelTxHash'>, hooks: ReserveHooks): Promise<ReserveOutcome>;
  /**
   * `reserve` for an authorization whose EIP-3009 nonce the platform chooses (a custodial account's):
   * in the same transaction, under the same account lock, `choose` is given the highest counter nonce
   * (below 2^64, `counterNonceLimit`) this account's rows hold in this token, undefined for none, and
   * answers the nonce and the row's key. So no two reservations of one account can be given one nonce,
   * and every nonce chosen is above every one the account's rows hold.
   */
  reserveCounted(record: Omit<AuthorizationRecord, 'nonce' | 'chainNonce' | 'status' | 'txHash' | 'cancelTxHash'>, hooks: ReserveHooks,
    choose: (previous: bigint | undefined) => CountedNonce): Promise<CountedNonce | Exclude<ReserveOutcome, 'reserved'>>;
  /**
   * `reserveCounted` for an account transfer (a token without EIP-3009, src/wallet/authorize-account-transfer.ts):
   * the account's nonces are one sequence per network across every token (VixpayAccount keeps them
   * per account), so `choose` is given the highest one any of this account's account-transfer rows
   * on this network holds (its keys, `accountNonceKeyPrefix`), undefined for none, under the same
   * account lock and in the same transaction as the insert.
   */
  reserveAccountNonce(record: Omit<AuthorizationRecord, 'nonce' | 'chainNonce' | 'status' | 'txHash' | 'cancelTxHash'>, hooks: ReserveHooks,
    choose: (previous: bigint | undefined) => CountedNonce): Promise<CountedNonce | Exclude<ReserveOutcome, 'reserved'>>;
  /** The authorization of an operation (its reference, unique per network). */
  findByReference(network: string, reference: string): Promise<AuthorizationRecord | undefined>;
  /**
   * Takes `reference` for nothing when no authorization has it: a `void` row (key `voidKeyOf`, no
   * account, no value), so no transfer can ever be reserved under it (`duplicate`). True when this
   * call took it; false when an authorization already has it.
   */
  voidReference(network: string, reference: string, now: number): Promise<boolean>;
  /**
   * Undoes a reservation that was never journaled (so never signed into a transaction, never sent):
   * deletes it, freeing its funds, and makes `tempKeyHash`, the temp key it used up, usable again, in
   * one transaction. False (nothing changed) when it is no longer `reserved`.
   */
  release(nonce: string, tempKeyHash?: string): Promise<boolean>;
  /** Ends an open authorization; false if it had already ended. */
  finish(nonce: string, status: Exclude<AuthorizationStatus, 'reserved' | 'submitted'>, fields: { txHash?: string; cancelTxHash?: string }, now: number): Promise<boolean>;
  find(nonce: string): Promise<AuthorizationRecord | undefined>;
  /** Open authorizations of a network whose validity ended before `validBefore` (Unix seconds). */
  listOpenExpired(network: string, before: number): Promise<AuthorizationRecord[]>;
  /**
   * Account transfers (`accountNonceKeyPrefix` keys) of a network still `submitted` whose transaction
   * the relayer's journal records mined (confirmed, failed or replaced): what a process that stopped
   * before reading the receipt left open; recovery marked used those the receipt executed.
   */
  listAccountTransfersMined(network: string): Promise<AuthorizationRecord[]>;
  /**
   * The newest authorization of a network whose reference starts with `prefix`: the latest attempt
   * of an operation that signs a new one per attempt (a reward claim, `reward:<id>:<attempt>`).
   */
  findLatestByReferencePrefix(network: string, prefix: string): Promise<AuthorizationRecord | undefined>;
  /** What the open authorizations of `fromAddress` in this token hold (base units): funds already promised. */
  held(record: { network: string; contractAddress: string; fromAddress: string }): Promise<bigint>;
}

export type ReserveOutcome = 'reserved' | 'temp_key_used' | 'insufficient' | 'duplicate';

/** A nonce chosen by the platform: its row's key (`nonce`) and the EIP-3009 nonce itself (bytes32 0x-hex, lowercase). */
export interface CountedNonce {
  nonce: string;
  chainNonce: string;
}

/** Where every account transfer's key of a network starts (`accountNonceKeyPrefix` adds the account). */
export const accountTransferKeyPrefix = (network: string) => `${network}:account:`;
/**
 * The row keys of an account's account-transfer nonces on a network all start with this; the nonce
 * follows as 64 hex digits, so the keys sort as their nonces do (src/wallet/authorization-nonce.ts).
 */
export const accountNonceKeyPrefix = (network: string, account: string) => `${accountTransferKeyPrefix(network)}${account.toLowerCase()}:`;
/** The key of the row `voidReference` writes (outside every nonce range the reservations read). */
export const voidKeyOf = (network: string, reference: string) => `${network}:void:${reference}`;

/** Counter nonces are below 2^64: as bytes32 hex, 48 zero digits and then 16 (src/wallet/authorization-nonce.ts). */
export const counterNonceLimit = 1n << 64n;
const counterFloor = `0x${'0'.repeat(64)}`;
const counterCeiling = `0x${'0'.repeat(47)}1${'0'.repeat(16)}`;

/**
 * How concurrent reservations of one account are decided one at a time:
 * - `row`: the account's row lock, held while its open authorizations are read and the new one
 *   written (PostgreSQL: several instances, and other accounts' reservations go on meanwhile);
 * - `process`: a lock of this process per account (SQLite, one instance).
 * Either way the balance is read from the node before, with no lock held and no transaction open:
 * a slow node never holds a database connection or another account's reservation.
 */
export type AccountLocking = 'row' | 'process';

export function createAuthorizationRepository(db: Db, locking: AccountLocking = 'row'): AuthorizationRepository {
  const accountLocks = new Map<string, Promise<unknown>>();
  /** Runs `work` after every earlier one of the same account has ended. */
  const underAccountLock = <T>(account: string, work: () => Promise<T>): Promise<T> => {
    const previous = accountLocks.get(account) ?? Promise.resolve();
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    // Stryker disable next-line CallExpression: equivalent ('process' locking is SQLite's, whose one connection already runs the reservations' transactions one at a time, src/store/sqlite-dialect.ts; the lock orders them, no outcome changes)
    accountLocks.set(account, tail);
    // Stryker disable next-line BlockStatement,ConditionalExpression,EqualityOperator: only frees the map's entry; equivalent ('process' locking is SQLite's, whose one connection already runs the reservations' transactions one at a time, src/store/sqlite-dialect.ts; the lock orders them, no outcome changes)
    void tail.then(() => { if (accountLocks.get(account) === tail) accountLocks.delete(account); });
    return run;
  };
  type Account = { network: string; contractAddress: string; fromAddress: string };
  /**
   * What open authorizations hold; with `recent`, also those used up since `recent.since` that were
   * not used yet when the balance was read (`recent.usedBefore`): that balance may not show them.
   */
  const heldBy = async (executor: Db | Transaction<Database>, record: Account, recent?: { since: number; usedBefore: ReadonlySet<string> }) => {
    const rows = await executor.selectFrom('authorizations').select(['nonce', 'value', 'status'])
      .where('network', '=', record.network).where('contract_address', '=', record.contractAddress)
      .where('from_address', '=', record.fromAddress)
      .where((eb) => recent === undefined ? eb('status', 'in', openAuthorizationStatuses)
        : eb.or([eb('status', 'in', openAuthorizationStatuses), eb.and([eb('status', '=', 'used'), eb('updated_at', '>=', recent.since)])]))
      .execute();
    return rows.filter((row) => row.status !== 'used' || !recent?.usedBefore.has(row.nonce)).reduce((sum, row) => sum + BigInt(row.value), 0n);
  };
  /** The account's authorizations used up since `since`, as they stand now. */
  const usedSince = async (record: Account, since: number) => new Set((await db.selectFrom('authorizations').select('nonce')
    .where('network', '=', record.network).where('contract_address', '=', record.contractAddress)
    .where('from_address', '=', record.fromAddress).where('status', '=', 'used').where('updated_at', '>=', since)
    .execute()).map((row) => row.nonce));

  type Reservable = Omit<AuthorizationRecord, 'nonce' | 'chainNonce' | 'status' | 'txHash' | 'cancelTxHash'>;
  /** Reserves `record` with the nonce `nonceOf` answers inside the reservation's transaction. */
  const reserveWith = async (record: Reservable, hooks: ReserveHooks, nonceOf: (trx: Transaction<Database>) => Promise<CountedNonce>): Promise<CountedNonce | Exclude<ReserveOutcome, 'reserved'>> => {
    type Refusal = Exclude<ReserveOutcome, 'reserved'>;
    class Refused extends Error {
      readonly outcome: Refusal;
      constructor(outcome: Refusal) { super(outcome); this.outcome = outcome; }
    }
    const value = BigInt(record.value);
    // The node first, outside any lock or transaction: a node that answers in seconds holds
    // nothing. What is used up from here on may not show in the balance and is counted as held
    // below; what was used up before shows in it and is not counted twice.
    const since = record.createdAt - recentlyUsedWindowMs;
    const usedBefore = await usedSince(record, since);
    const balance = await hooks.balance();
    let chosen: CountedNonce | undefined;
    const reserveIn = () => db.transaction().execute(async (trx) => {
      if (hooks.consumeTempKey !== undefined) {
        const spent = await trx.updateTable('temp_keys').set({ used_at: record.createdAt })
          .where('key_hash', '=', hooks.consumeTempKey).where('used_at', 'is', null).where('expires_at', '>', record.createdAt)
          .executeTakeFirst();
        if (Number(spent.numUpdatedRows) !== 1) throw new Refused('temp_key_used');
      }
      if (locking === 'row') {
        // A no-op update takes the account row's write lock (PostgreSQL) or the database's
        // (SQLite): the read of held funds below cannot interleave with another reservation.
        await trx.updateTable('accounts').set((eb) => ({ address: eb.ref('address') }))
          .where('address', '=', record.fromAddress).execute();
      }
      chosen = await nonceOf(trx);
      const { nonce } = chosen;
      const taken = await trx.selectFrom('authorizations').select('nonce')
        .where((eb) => eb.or([eb('nonce', '=', nonce), eb.and([eb('network', '=', record.network), eb('reference', '=', record.reference)])]))
        .executeTakeFirst();
      if (taken) throw new Refused('duplicate');
      if (balance - (await heldBy(trx, record, { since, usedBefore })) < value) throw new Refused('insufficient');
      await trx.insertInto('authorizations').values({
        nonce, network: record.network, reference: record.reference, contract_address: record.contractAddress,
        from_address: record.fromAddress, to_address: record.toAddress, value: record.value, valid_before: record.validBefore,
        from_block: record.fromBlock, status: 'reserved', tx_hash: null, cancel_tx_hash: null, created_at: record.createdAt, updated_at: record.updatedAt,
        chain_nonce: chosen.chainNonce === nonce ? null : chosen.chainNonce,
      }).execute();
    });
    try {
      // Stryker disable next-line ConditionalExpression,EqualityOperator: equivalent ('process' locking is SQLite's, whose one connection already runs the reservations' transactions one at a time, src/store/sqlite-dialect.ts; the lock orders them, no outcome changes); PostgreSQL under the process lock as well keeps its row lock
      if (locking === 'row') await reserveIn();
      else await underAccountLock(record.fromAddress, reserveIn);
      return chosen as CountedNonce;
    } catch (error) {
      if (error instanceof Refused) return error.outcome;
      throw error;
    }
  };

  return {
    async reserve(record, hooks) {
      const { nonce, chainNonce, ...rest } = record;
      const outcome = await reserveWith(rest, hooks, async () => ({ nonce, chainNonce: chainNonce ?? nonce }));
      return typeof outcome === 'string' ? outcome : 'reserved';
    },
    reserveCounted: (record, hooks, choose) => reserveWith(record, hooks, async (trx) => {
      const last = await trx.selectFrom('authorizations').select('chain_nonce')
        .where('network', '=', record.network).where('contract_address', '=', record.contractAddress).where('from_address', '=', record.fromAddress)
        .where('chain_nonce', '>', counterFloor).where('chain_nonce', '<', counterCeiling)
        .orderBy('chain_nonce', 'desc').limit(1).executeTakeFirst();
      return choose(last?.chain_nonce ? BigInt(last.chain_nonce) : undefined);
    }),
    reserveAccountNonce: (record, hooks, choose) => reserveWith(record, hooks, async (trx) => {
      const prefix = accountNonceKeyPrefix(record.network, record.fromAddress);
      // A range on the primary key, not LIKE: its index answers it on both databases.
      const last = await trx.selectFrom('authorizations').select('nonce')
        .where('nonce', '>=', prefix).where('nonce', '<', `${prefix}\u{10FFFF}`)
        .orderBy('nonce', 'desc').limit(1).executeTakeFirst();
      return choose(last ? BigInt(`0x${last.nonce.slice(prefix.length).replace(/^0x/, '')}`) : undefined);
    }),
    async findByReference(network, reference) {
      const row = await db.selectFrom('authorizations').selectAll().where('network', '=', network).where('reference', '=', reference).executeTakeFirst();
      return row && toRecord(row);
    },
    async voidReference(network, reference, now) {
      const inserted = await db.insertInto('authorizations').values({
        nonce: voidKeyOf(network, reference), network, reference, contract_address: '', from_address: '', to_address: '', value: '0',
        valid_before: 0, from_block: 0, status: 'void', tx_hash: null, cancel_tx_hash: null, created_at: now, updated_at: now, chain_nonce: null,
      }).onConflict((conflict) => conflict.doNothing()).executeTakeFirst();
      return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async release(nonce, tempKeyHash) {
      return db.transaction().execute(async (trx) => {
        const deleted = await trx.deleteFrom('authorizations').where('nonce', '=', nonce).where('status', '=', 'reserved').executeTakeFirst();
        if (Number(deleted.numDeletedRows) !== 1) return false;
        if (tempKeyHash !== undefined) await trx.updateTable('temp_keys').set({ used_at: null }).where('key_hash', '=', tempKeyHash).execute();
        return true;
      });
    },
    async finish(nonce, status, fields, now) {
      const result = await db.updateTable('authorizations')
        .set({ status, ...(fields.txHash && { tx_hash: fields.txHash }), ...(fields.cancelTxHash && { cancel_tx_hash: fields.cancelTxHash }), updated_at: now })
        .where('nonce', '=', nonce).where('status', 'in', openAuthorizationStatuses).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async find(nonce) {
      const row = await db.selectFrom('authorizations').selectAll().where('nonce', '=', nonce).executeTakeFirst();
      return row && toRecord(row);
    },
    async listOpenExpired(network, before) {
      const rows = await db.selectFrom('authorizations').selectAll()
        .where('network', '=', network).where('status', 'in', openAuthorizationStatuses).where('valid_before', '<', before)
        .orderBy('created_at').execute();
      return rows.map(toRecord);
    },
    async listAccountTransfersMined(network) {
      const prefix = accountTransferKeyPrefix(network);
      const rows = await db.selectFrom('authorizations').selectAll('authorizations')
        .innerJoin('chain_txs', (join) => join.onRef('chain_txs.tx_hash', '=', 'authorizations.tx_hash').onRef('chain_txs.network', '=', 'authorizations.network'))
        .where('authorizations.network', '=', network).where('authorizations.status', '=', 'submitted').where('chain_txs.status', '!=', 'signed')
        // A range on the primary key, not LIKE: its index answers it on both databases.
        .where('authorizations.nonce', '>=', prefix).where('authorizations.nonce', '<', `${prefix}\u{10FFFF}`)
        .orderBy('authorizations.created_at').execute();
      return rows.map(toRecord);
    },
    held: (record) => heldBy(db, record),
    async findLatestByReferencePrefix(network, prefix) {
      // A range, not LIKE: the (network, reference) index answers it on both databases.
      const row = await db.selectFrom('authorizations').selectAll()
        .where('network', '=', network).where('reference', '>=', prefix).where('reference', '<', `${prefix}\u{10FFFF}`)
        .orderBy('created_at', 'desc').orderBy('nonce').limit(1).executeTakeFirst();
      return row && toRecord(row);
    },
  };
}
