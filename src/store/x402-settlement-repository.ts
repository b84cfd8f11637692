import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { X402SettlementStatus, X402SettlementsTable } from './schema.ts';
import { withWebhookEvent, type NewWebhookEvent } from './webhook-repository.ts';

/** A payment accepted by POST /x402/settle (docs/x402.md). */
export interface X402SettlementRecord {
  /**
   * `<network>:<token>:<payer>:<nonce>`, lowercase (authorizationKey, src/chain/mined-receipt.ts): an
   * EIP-3009 nonce is its authorizer's and token's, so this is the payment's identity; also its
   * `authorizations` row's key and its receipt's source.
   */
  id: string;
  /** The EIP-3009 nonce, lowercase 0x-hex. */
  nonce: string;
  network: string;
  /** Checksummed addresses. */
  payer: string;
  payTo: string;
  asset: string;
  /** Base units, the canonical uint256 decimal (#shared/uint256.ts). */
  amount: string;
  /**
   * Unix seconds as signed, the canonical uint256 decimal: a signature may name any uint256 (2^53 + 1,
   * 20 digits…), and the chain checks the signature against exactly that value.
   */
  validBefore: string;
  /** Unix seconds as signed, the canonical uint256 decimal; the chain executes it only after this. */
  validAfter: string;
  signature: string;
  keyId: string;
  status: X402SettlementStatus;
  txHash: string | null;
  errorReason: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface X402SettlementRepository {
  /** Inserts it `accepted` (`validAfter` '0' when omitted); false (nothing written) when its id was accepted before. */
  accept(record: Omit<X402SettlementRecord, 'status' | 'txHash' | 'errorReason' | 'validAfter'> & { validAfter?: string }): Promise<boolean>;
  find(id: string): Promise<X402SettlementRecord | undefined>;
  /** The settlements of `payer` (checksummed) with this nonce (lowercase), newest first: one per network and token at most. */
  findByPayerNonce(payer: string, nonce: string): Promise<X402SettlementRecord[]>;
  /**
   * Ends an `accepted` settlement, with `event` (its webhook) in the same transaction; false when it
   * had ended already (whoever ended it first wrote the one event).
   */
  finish(id: string, outcome: { status: 'settled' | 'failed'; txHash?: string | null; errorReason?: string | null },
    now: number, event?: NewWebhookEvent): Promise<boolean>;
  /** Settlements still `accepted` that were accepted before `before` (epoch ms), oldest first. */
  listAccepted(before: number, limit: number): Promise<X402SettlementRecord[]>;
  /** Settlements by status accepted since `since` (epoch ms): the console's figures. */
  countSince(since: number): Promise<Record<X402SettlementStatus, number>>;
}

const toRecord = (row: X402SettlementsTable): X402SettlementRecord => ({
  id: row.id, nonce: row.nonce, network: row.network, payer: row.payer, payTo: row.pay_to, asset: row.asset, amount: row.amount,
  validBefore: String(row.valid_before), validAfter: String(row.valid_after), signature: row.signature, keyId: row.key_id, status: row.status, txHash: row.tx_hash,
  errorReason: row.error_reason, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
});

export function createX402SettlementRepository(db: Db): X402SettlementRepository {
  return {
    async accept(r) {
      const result = await db.insertInto('x402_settlements').values({
        id: r.id, nonce: r.nonce, network: r.network, payer: r.payer, pay_to: r.payTo, asset: r.asset, amount: r.amount, valid_before: r.validBefore, valid_after: r.validAfter ?? '0',
        signature: r.signature, key_id: r.keyId, status: 'accepted', tx_hash: null, error_reason: null, created_at: r.createdAt, updated_at: r.updatedAt,
      }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async find(id) {
      const row = await db.selectFrom('x402_settlements').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async findByPayerNonce(payer, nonce) {
      const rows = await db.selectFrom('x402_settlements').selectAll().where('payer', '=', payer).where('nonce', '=', nonce)
        .orderBy('created_at', 'desc').orderBy('id').execute();
      return rows.map(toRecord);
    },
    async finish(id, outcome, now, event) {
      return withWebhookEvent(db, event, now, async (trx) => {
        const result = await trx.updateTable('x402_settlements')
          .set({ status: outcome.status, tx_hash: outcome.txHash ?? null, error_reason: outcome.errorReason ?? null, updated_at: now })
          .where('id', '=', id).where('status', '=', 'accepted').executeTakeFirst();
        return Number(result.numUpdatedRows) === 1;
      });
    },
    async listAccepted(before, limit) {
      const rows = await db.selectFrom('x402_settlements').selectAll().where('status', '=', 'accepted').where('created_at', '<', before)
        .orderBy('created_at').limit(limit).execute();
      return rows.map(toRecord);
    },
    async countSince(since) {
      const rows = await db.selectFrom('x402_settlements').select(['status', sql<number>`count(*)`.as('n')])
        .where('created_at', '>=', since).groupBy('status').execute();
      const counts: Record<X402SettlementStatus, number> = { accepted: 0, settled: 0, failed: 0 };
      for (const row of rows) counts[row.status] = Number(row.n);
      return counts;
    },
  };
}
