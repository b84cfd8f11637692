import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { TokensTable } from './schema.ts';

export interface StoredAccount {
  address: string;
  privateKeyEnc: string;
  secretKeyEnc: string;
}

export interface TempKeyRecord {
  keyHash: string;
  address: string;
  keyType: string;
  expiresAt: number;
  usedAt: number | null;
}

export type TokenRecord = TokensTable;

/** Accounts, temp keys and known tokens of the custodial wallet. Addresses are stored checksummed. */
export interface WalletRepository {
  insertAccount(account: StoredAccount, now: number): Promise<boolean>;
  findAccount(address: string): Promise<StoredAccount | undefined>;
  /**
   * Stores an unused temp key only if its address has an account: one statement (one write and one
   * wait for it to be on disk) instead of a lookup and an insert. False when there is no such account.
   */
  insertTempKeyForAccount(record: Omit<TempKeyRecord, 'usedAt'>, now: number): Promise<boolean>;
  findTempKey(keyHash: string): Promise<TempKeyRecord | undefined>;
  /** Marks the key used if it still is unused and unexpired; false when it was not. */
  consumeTempKey(keyHash: string, now: number): Promise<boolean>;
  /**
   * Deletes the temp keys no request can use any more: unused ones expired before `now`, used ones
   * used before `usedBefore` (kept a while so a replay is told "already used"). Answers how many.
   */
  deleteDeadTempKeys(now: number, usedBefore: number): Promise<number>;
  insertToken(token: TokenRecord): Promise<void>;
  findToken(network: string, contractAddress: string): Promise<TokenRecord | undefined>;
  findTokenBySymbol(network: string, symbol: string): Promise<TokenRecord | undefined>;
  /**
   * A token the operator allowed that custodial accounts move by EIP-3009 (not deployed through the
   * platform: USDC, say): its EIP-712 domain (name, version) and decimals as `vixpay token allow` read them.
   */
  findAllowedEip3009Token(network: string, contractAddress: string): Promise<{ symbol: string; name: string; version: string; decimals: number } | undefined>;
  /**
   * A token the operator allowed that has no EIP-3009 (USDT, the BEP-20 pegs): custodial accounts move
   * it through the account contract (EIP-7702, src/wallet/authorize-account-transfer.ts).
   */
  findAllowedAccountToken(network: string, contractAddress: string): Promise<{ symbol: string; name: string; decimals: number } | undefined>;
}

export function createWalletRepository(db: Db): WalletRepository {
  return {
    async insertAccount(account, now) {
      const result = await db.insertInto('accounts')
        .values({ address: account.address, private_key_enc: account.privateKeyEnc, secret_key_enc: account.secretKeyEnc, created_at: now })
        .onConflict((oc) => oc.column('address').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async findAccount(address) {
      const row = await db.selectFrom('accounts').selectAll().where('address', '=', address).executeTakeFirst();
      return row && { address: row.address, privateKeyEnc: row.private_key_enc, secretKeyEnc: row.secret_key_enc };
    },
    async insertTempKeyForAccount(record, now) {
      // SQL text rather than the query builder: net_getTempKey's one statement, and building it was
      // the builder's largest cost per request. Typed parameters: PostgreSQL would take an untyped
      // one in a select list as text.
      const result = await sql`
        insert into temp_keys (key_hash, address, key_type, expires_at, used_at, created_at)
        select cast(${record.keyHash} as text), address, cast(${record.keyType} as text), cast(${record.expiresAt} as bigint), null, cast(${now} as bigint)
        from accounts where address = ${record.address}`.execute(db);
      return Number(result.numAffectedRows ?? 0n) === 1;
    },
    async findTempKey(keyHash) {
      const row = await db.selectFrom('temp_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
      return row && { keyHash: row.key_hash, address: row.address, keyType: row.key_type, expiresAt: Number(row.expires_at), usedAt: row.used_at };
    },
    async consumeTempKey(keyHash, now) {
      const result = await db.updateTable('temp_keys').set({ used_at: now })
        .where('key_hash', '=', keyHash).where('used_at', 'is', null).where('expires_at', '>', now)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async deleteDeadTempKeys(now, usedBefore) {
      const result = await db.deleteFrom('temp_keys').where((eb) => eb.or([
        eb.and([eb('used_at', 'is', null), eb('expires_at', '<=', now)]),
        eb.and([eb('used_at', 'is not', null), eb('used_at', '<', usedBefore)]),
      ])).executeTakeFirst();
      return Number(result.numDeletedRows);
    },
    async insertToken(token) {
      await db.insertInto('tokens').values(token)
        .onConflict((oc) => oc.columns(['network', 'contract_address']).doNothing()).execute();
    },
    async findToken(network, contractAddress) {
      return db.selectFrom('tokens').selectAll()
        .where('network', '=', network).where('contract_address', '=', contractAddress).executeTakeFirst();
    },
    async findTokenBySymbol(network, symbol) {
      return db.selectFrom('tokens').selectAll()
        .where('network', '=', network).where('symbol', '=', symbol).orderBy('created_at').executeTakeFirst();
    },
    async findAllowedEip3009Token(network, contractAddress) {
      const row = await db.selectFrom('settlement_tokens').select(['symbol', 'name', 'decimals', 'eip712_version'])
        .where('network', '=', network).where('contract_address', '=', contractAddress).where('transfer_path', '=', 'eip3009').executeTakeFirst();
      return row?.eip712_version ? { symbol: row.symbol, name: row.name, version: row.eip712_version, decimals: Number(row.decimals) } : undefined;
    },
    async findAllowedAccountToken(network, contractAddress) {
      const row = await db.selectFrom('settlement_tokens').select(['symbol', 'name', 'decimals'])
        .where('network', '=', network).where('contract_address', '=', contractAddress).where('transfer_path', '=', 'account').executeTakeFirst();
      return row && { symbol: row.symbol, name: row.name, decimals: Number(row.decimals) };
    },
  };
}

/** The wallets' stored keys as a whole, for moving them from one custody (or wrapping key) to another. */
export interface AccountKeyRepository {
  /** Up to `limit` accounts, by address after `after`, whose stored key does not start with `settled`. */
  listKeysNotIn(settled: string, after: string, limit: number): Promise<Array<{ address: string; privateKeyEnc: string }>>;
  /** Replaces the stored key only if it still is `from` (compare and swap): false when another run or instance changed it first. */
  replaceKey(address: string, from: string, to: string): Promise<boolean>;
  /** How many accounts' stored keys do not start with `settled`. */
  countKeysNotIn(settled: string): Promise<number>;
}

export function createAccountKeyRepository(db: Db): AccountKeyRepository {
  // A prefix match without LIKE's wildcards (labels hold `-`, and `_` would be one): substr of its length.
  const notIn = (settled: string) => sql<boolean>`substr(private_key_enc, 1, ${settled.length}) <> ${settled}`;
  return {
    async listKeysNotIn(settled, after, limit) {
      const rows = await db.selectFrom('accounts').select(['address', 'private_key_enc'])
        .where(notIn(settled)).where('address', '>', after).orderBy('address').limit(limit).execute();
      return rows.map((row) => ({ address: row.address, privateKeyEnc: row.private_key_enc }));
    },
    async replaceKey(address, from, to) {
      const result = await db.updateTable('accounts').set({ private_key_enc: to })
        .where('address', '=', address).where('private_key_enc', '=', from).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async countKeysNotIn(settled) {
      const row = await db.selectFrom('accounts').select((eb) => eb.fn.countAll<string | number>().as('n')).where(notIn(settled)).executeTakeFirstOrThrow();
      return Number(row.n);
    },
  };
}
