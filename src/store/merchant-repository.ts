import type { Db } from './db.ts';
import type { RateNoticesTable, StoresTable } from './schema.ts';

export interface StoreRecord {
  tid: string;
  name: string;
  settlementAddress: string;
}

/**
 * The token a rate notice prices: the platform token of the payment network (VIXP), or a token of the
 * operator allow-list by its network and checksummed contract.
 */
export type RateNoticeToken = { platformToken: true } | { network: string; contractAddress: string };

export const platformTokenNotice: RateNoticeToken = { platformToken: true };

export interface RateNoticeRecord {
  currency: string;
  token: RateNoticeToken;
  noticeDate: string;
  noticeIndex: number;
  rate: string;
  publishedAt: number;
}

/** Stores (merchants), exchange-rate notices and the number sequences of approvals. */
export interface MerchantRepository {
  /** False when the tid is taken. */
  insertStore(store: StoreRecord & { apiKeyHash: string }, now: number): Promise<boolean>;
  findStore(tid: string): Promise<StoreRecord | undefined>;
  findStoreByApiKeyHash(apiKeyHash: string): Promise<StoreRecord | undefined>;
  /**
   * Publishes a notice with the next index of (currency, noticeDate), one sequence for every token of
   * the currency; retried on a concurrent publish. Without a token it prices the platform token.
   */
  insertRateNotice(notice: Omit<RateNoticeRecord, 'noticeIndex' | 'token'> & { token?: RateNoticeToken }): Promise<RateNoticeRecord>;
  /** The notice in force: the last one published for the currency and token (the platform token when none is named). */
  latestRateNotice(currency: string, token?: RateNoticeToken): Promise<RateNoticeRecord | undefined>;
  /** 1, 2, 3, … per name, without gaps or repeats under concurrency. */
  nextNumber(name: string): Promise<number>;
}

const toStore = (row: Pick<StoresTable, 'tid' | 'name' | 'settlement_address'>): StoreRecord => ({
  tid: row.tid, name: row.name, settlementAddress: row.settlement_address,
});

/** The columns naming a notice's token: both '' for the platform token. */
const tokenColumns = (token: RateNoticeToken = platformTokenNotice) =>
  'platformToken' in token ? { network: '', contract_address: '' } : { network: token.network, contract_address: token.contractAddress };

const toNotice = (row: RateNoticesTable): RateNoticeRecord => ({
  currency: row.currency,
  token: row.contract_address === '' ? platformTokenNotice : { network: row.network, contractAddress: row.contract_address },
  noticeDate: row.notice_date, noticeIndex: Number(row.notice_index), rate: row.rate, publishedAt: Number(row.published_at),
});

export function createMerchantRepository(db: Db): MerchantRepository {
  return {
    async insertStore(store, now) {
      const result = await db.insertInto('stores')
        .values({ tid: store.tid, name: store.name, settlement_address: store.settlementAddress, api_key_hash: store.apiKeyHash, created_at: now })
        .onConflict((oc) => oc.column('tid').doNothing())
        .executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async findStore(tid) {
      const row = await db.selectFrom('stores').select(['tid', 'name', 'settlement_address']).where('tid', '=', tid).executeTakeFirst();
      return row && toStore(row);
    },
    async findStoreByApiKeyHash(apiKeyHash) {
      const row = await db.selectFrom('stores').select(['tid', 'name', 'settlement_address']).where('api_key_hash', '=', apiKeyHash).executeTakeFirst();
      return row && toStore(row);
    },
    async insertRateNotice(notice) {
      for (let attempt = 0; ; attempt++) {
        const last = await db.selectFrom('rate_notices').select((eb) => eb.fn.max('notice_index').as('max'))
          .where('currency', '=', notice.currency).where('notice_date', '=', notice.noticeDate).executeTakeFirst();
        const noticeIndex = Number(last?.max ?? 0) + 1;
        const result = await db.insertInto('rate_notices')
          .values({
            currency: notice.currency, notice_date: notice.noticeDate, notice_index: noticeIndex, rate: notice.rate, published_at: notice.publishedAt,
            ...tokenColumns(notice.token),
          })
          .onConflict((oc) => oc.columns(['currency', 'notice_date', 'notice_index']).doNothing())
          .executeTakeFirst();
        if (Number(result.numInsertedOrUpdatedRows ?? 0n) === 1) return { ...notice, token: notice.token ?? platformTokenNotice, noticeIndex };
        if (attempt >= 20) throw new Error('could not allocate a rate notice index');
      }
    },
    async latestRateNotice(currency, token) {
      const columns = tokenColumns(token);
      const row = await db.selectFrom('rate_notices').selectAll().where('currency', '=', currency)
        .where('network', '=', columns.network).where('contract_address', '=', columns.contract_address)
        .orderBy('published_at', 'desc').orderBy('notice_date', 'desc').orderBy('notice_index', 'desc').executeTakeFirst();
      return row && toNotice(row);
    },
    async nextNumber(name) {
      return db.transaction().execute(async (trx) => {
        await trx.insertInto('number_sequences').values({ name, next_value: 1 })
          .onConflict((oc) => oc.column('name').doNothing()).execute();
        const row = await trx.updateTable('number_sequences').set((eb) => ({ next_value: eb('next_value', '+', 1) }))
          .where('name', '=', name).returning('next_value').executeTakeFirstOrThrow();
        return Number(row.next_value) - 1;
      });
    },
  };
}
