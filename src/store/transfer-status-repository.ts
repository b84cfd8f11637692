import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { AuthorizationStatus, ChainTxStatus } from './schema.ts';

/** A relayed transfer as a status lookup sees it: its authorization, with its token's symbol and decimals. */
export interface TransferStatusRecord {
  network: string;
  /** The operation it belongs to (`pay:…`, `payment:…`, `transfer:…`). */
  reference: string;
  status: AuthorizationStatus;
  /** The transaction that carried (or tried to carry) it. */
  txHash: string | null;
  contractAddress: string;
  fromAddress: string;
  toAddress: string;
  /** Base units. */
  value: string;
  tokenSymbol: string | null;
  decimals: number | null;
  updatedAt: number;
}

/** A journaled relayer transaction that carries no transfer authorization (a token deployment, a mint). */
export interface RelayedTransactionRecord {
  network: string;
  kind: string;
  txHash: string;
  status: ChainTxStatus;
  blockNumber: number | null;
}

/** Read-only lookups of transfers by transaction or by operation reference. */
export interface TransferStatusRepository {
  /**
   * The transfers carried by `txHash` (the hash their authorizations record, or any journaled send of
   * one, or a version a re-pricing superseded): several when they shared a settlement batch; those
   * from `fromAddress` only, when given.
   */
  findByTransaction(network: string, txHash: string, fromAddress?: string): Promise<TransferStatusRecord[]>;
  findByReference(network: string, reference: string): Promise<TransferStatusRecord | undefined>;
  findRelayedTransaction(network: string, txHash: string): Promise<RelayedTransactionRecord | undefined>;
}

export function createTransferStatusRepository(db: Db): TransferStatusRepository {
  const select = () => db.selectFrom('authorizations as a')
    .leftJoin('tokens as t', (join) => join.onRef('t.network', '=', 'a.network').onRef('t.contract_address', '=', 'a.contract_address'))
    // A token the operator allowed (USDC, USDT: not deployed through the platform) has its symbol and decimals there.
    .leftJoin('settlement_tokens as s', (join) => join.onRef('s.network', '=', 'a.network').onRef('s.contract_address', '=', 'a.contract_address'))
    .select(['a.network', 'a.reference', 'a.status', 'a.tx_hash', 'a.contract_address', 'a.from_address', 'a.to_address', 'a.value', 'a.updated_at', 't.symbol', 't.decimals',
      's.symbol as allowedSymbol', 's.decimals as allowedDecimals']);
  type Row = Awaited<ReturnType<ReturnType<typeof select>['executeTakeFirst']>>;
  const toRecord = (row: Row): TransferStatusRecord | undefined => row && {
    network: row.network, reference: row.reference, status: row.status, txHash: row.tx_hash, contractAddress: row.contract_address,
    fromAddress: row.from_address, toAddress: row.to_address, value: row.value, tokenSymbol: row.symbol ?? row.allowedSymbol,
    decimals: row.decimals !== null ? Number(row.decimals) : row.allowedDecimals !== null ? Number(row.allowedDecimals) : null,
    updatedAt: Number(row.updated_at),
  };
  const findByReference = async (network: string, reference: string) =>
    toRecord(await select().where('a.network', '=', network).where('a.reference', '=', reference).executeTakeFirst());
  return {
    async findByTransaction(network, asked, fromAddress) {
      // A re-priced transaction's superseded version (migration 0012) stands for the version mined,
      // which its authorizations name: the answer carries that hash.
      const superseded = await db.selectFrom('chain_tx_versions as v').innerJoin('chain_txs as c', 'c.id', 'v.chain_tx_id')
        .select('c.tx_hash').where('v.tx_hash', '=', asked).where('c.network', '=', network).executeTakeFirst();
      const txHash = superseded?.tx_hash ?? asked;
      let query = select().where('a.network', '=', network).where('a.tx_hash', '=', txHash);
      if (fromAddress !== undefined) query = query.where(sql<string>`lower(a.from_address)`, '=', fromAddress.toLowerCase());
      const direct = await query.orderBy('a.created_at').execute();
      if (direct.length > 0) return direct.flatMap((row) => toRecord(row) ?? []);
      // A single transfer's send the authorization no longer names (before settlement batches, a
      // transfer had its own transaction; another one used or cancelled its authorization).
      const sent = await db.selectFrom('chain_txs').select('reference').where('network', '=', network).where('tx_hash', '=', txHash)
        .where('kind', '=', 'transfer').executeTakeFirst();
      const record = sent?.reference ? await findByReference(network, sent.reference) : undefined;
      return record && (fromAddress === undefined || record.fromAddress.toLowerCase() === fromAddress.toLowerCase()) ? [record] : [];
    },
    findByReference,
    async findRelayedTransaction(network, txHash) {
      const row = await db.selectFrom('chain_txs').select(['network', 'kind', 'tx_hash', 'status', 'block_number'])
        .where('network', '=', network).where('tx_hash', '=', txHash).executeTakeFirst();
      return row && { network: row.network, kind: row.kind, txHash: row.tx_hash, status: row.status, blockNumber: row.block_number === null ? null : Number(row.block_number) };
    },
  };
}
