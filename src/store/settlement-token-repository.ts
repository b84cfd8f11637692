import type { Db } from './db.ts';
import type { SettlementTokensTable } from './schema.ts';

export type TransferPath = 'eip3009' | 'account';

export interface SettlementTokenRecord {
  network: string;
  /** Checksummed. */
  contractAddress: string;
  symbol: string;
  allowedAt: number;
  name: string;
  decimals: number;
  /** The version of its EIP-3009 domain (its name is `name`); null: no EIP-3009. */
  eip712Version: string | null;
  /** How custodial accounts move it: EIP-3009, or the account contract through EIP-7702. */
  transferPath: TransferPath;
}

/**
 * A token to list. Unstated, it is one deployed through the platform (VixpToken): its symbol as
 * name, 18 decimals, EIP-3009 under version "1".
 */
export type SettlementTokenEntry = Pick<SettlementTokenRecord, 'network' | 'contractAddress' | 'symbol' | 'allowedAt'>
  & Partial<Pick<SettlementTokenRecord, 'name' | 'decimals' | 'eip712Version' | 'transferPath'>>;

/** The operator allow-list of settlement tokens, per network. */
export interface SettlementTokenRepository {
  /** Adds the token, or keeps the existing entry (answered) when it is listed already. */
  allow(token: SettlementTokenEntry): Promise<SettlementTokenRecord>;
  /** False when the token was not listed. */
  disallow(network: string, contractAddress: string): Promise<boolean>;
  find(network: string, contractAddress: string): Promise<SettlementTokenRecord | undefined>;
  findBySymbol(network: string, symbol: string): Promise<SettlementTokenRecord[]>;
  list(network?: string): Promise<SettlementTokenRecord[]>;
}

const toRecord = (row: SettlementTokensTable): SettlementTokenRecord => ({
  network: row.network, contractAddress: row.contract_address, symbol: row.symbol, allowedAt: Number(row.allowed_at),
  name: row.name, decimals: Number(row.decimals), eip712Version: row.eip712_version, transferPath: row.transfer_path === 'account' ? 'account' : 'eip3009',
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
        .values({
          network: token.network, contract_address: token.contractAddress, symbol: token.symbol, allowed_at: token.allowedAt,
          name: token.name ?? token.symbol, decimals: token.decimals ?? 18,
          eip712_version: token.eip712Version === undefined ? '1' : token.eip712Version, transfer_path: token.transferPath ?? 'eip3009',
        })
        .onConflict((oc) => oc.columns(['network', 'contract_address']).doNothing()).execute();
      return (await find(token.network, token.contractAddress))!;
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
