import type { Generated } from 'kysely';

/** Table types. Each domain's migration adds its tables here too. */
export interface Database {
  accounts: AccountsTable;
  temp_keys: TempKeysTable;
  relayer_nonces: RelayerNoncesTable;
  chain_txs: ChainTxsTable;
  deployments: DeploymentsTable;
  tokens: TokensTable;
}

export interface AccountsTable {
  address: string;
  private_key_enc: string;
  secret_key_enc: string;
  created_at: number;
}

export interface TempKeysTable {
  key_hash: string;
  address: string;
  key_type: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface RelayerNoncesTable {
  network: string;
  address: string;
  next_nonce: number;
}

export type ChainTxStatus = 'signed' | 'confirmed' | 'failed';

export interface ChainTxsTable {
  id: string;
  network: string;
  kind: string;
  reference: string | null;
  relayer: string;
  nonce: number;
  raw_tx: string;
  tx_hash: string;
  from_address: string | null;
  to_address: string | null;
  contract_address: string | null;
  amount: string | null;
  status: ChainTxStatus;
  block_number: number | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

export interface DeploymentsTable {
  network: string;
  name: string;
  chain_id: number;
  address: string;
  tx_hash: string;
  created_at: number;
}

export interface TokensTable {
  network: string;
  contract_address: string;
  symbol: string;
  name: string;
  decimals: number;
  owner: string;
  created_at: number;
}

export type { Generated };
