import type { Db } from './db.ts';
import type { SettlementTokensTable } from './schema.ts';

export interface SettlementTokenRecord {
  network: string;
  /** Checksummed. */
  contractAddress: string;
  symbol: string;
  allowedAt: number;
}

/** The operator allow-list of settlement tokens, per network. */
export interface SettlementTokenRepository {
  /** Adds the token, or keeps the existing entry (answered) when it is listed already. */
  allow(token: SettlementTokenRecord): Promise<SettlementTokenRecord>;
  /** False when the token was not listed. */
  disallow(network: string, contractAddress: string): Promise<boolean>;
  find(network: string, contractAddress: string): Promise<SettlementTokenRecord | undefined>;
  findBySymbol(network: string, symbol: string): Promise<SettlementTokenRecord[]>;
  list(network?: string): Promise<SettlementTokenRecord[]>;
}

const toRecord = (row: SettlementTokensTable): SettlementTokenRecord => ({
  network: row.network, contractAddress: row.contract_address, symbol: row.symbol, allowedAt: Number(row.allowed_at),
});

export function createSettlementTokenRepository(db: Db): SettlementTokenRepository {
  const find = async (network: string, contractAddress: string) => {
    const row = await db.selectFrom('settlement_tokens').selectAll()
      .where('network', '=', network).where('contract_address', '=', contractAddress).executeTakeFirst();
    return row && toRecord(row);
  };
  return {
    async allow(token) {
      await db.insertInto('settlement_tokens')
        .values({ network: token.network, contract_address: token.contractAddress, symbol: token.symbol, allowed_at: token.allowedAt })
        .onConflict((oc) => oc.columns(['network', 'contract_address']).doNothing()).execute();
      return (await find(token.network, token.contractAddress)) ?? token;
    },
    async disallow(network, contractAddress) {
      const result = await db.deleteFrom('settlement_tokens')
        .where('network', '=', network).where('contract_address', '=', contractAddress).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    find,
    async findBySymbol(network, symbol) {
      const rows = await db.selectFrom('settlement_tokens').selectAll().where('network', '=', network).where('symbol', '=', symbol).execute();
      return rows.map(toRecord);
    },
    async list(network) {
      let query = db.selectFrom('settlement_tokens').selectAll();
      if (network !== undefined) query = query.where('network', '=', network);
      return (await query.orderBy('network').orderBy('allowed_at').execute()).map(toRecord);
    },
  };
}
