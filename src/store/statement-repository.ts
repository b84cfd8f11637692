import { sql } from 'kysely';
import type { Db } from './db.ts';
import { usedAuthorizations, type MinedCostRow } from './console-repository.ts';
import { appendWebhookEvent, type NewWebhookEvent } from './webhook-repository.ts';

/** A relayed transaction mined in the day's blocks (migration 0014: block and position). */
export interface MinedTx {
  txHash: string;
  blockNumber: number;
  txIndex: number;
  /** Seconds; null on a row journaled before migration 0014. */
  blockTimestamp: number | null;
}

/** What a statement line is: money in (payment, reward given back, x402 payment) or out (refund, reward paid). */
export type StatementLineKind = 'payment' | 'refund' | 'reward' | 'reward_cancellation' | 'x402';

/** One of the store's transfers as the platform recorded it; token amounts in base units. */
export interface StatementRow {
  kind: StatementLineKind;
  /** payments.id, payment_cancellations.id, rewards.id or x402_settlements.nonce. */
  sourceId: string;
  /** tran_no (payment, refund), reward_id, or `<payer>/<nonce>` of an x402 payment (its GET /x402/settlements path). */
  reference: string;
  /** Approval number; a refund's or reward cancellation's cancellation number; null for a reward claim. */
  approvalNo: string | null;
  txHash: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAmount: string;
  exchangeAmount: string | null;
  /** Null for an x402 payment: it names no currency. */
  exchangeCurrency: string | null;
  exchangeRate: string | null;
  /** The user's account (an x402 payment: the payer) on the other side of the transfer. */
  counterparty: string;
}

/** A mined transaction with its cost and the transfers it executed (the operator's day). */
export interface MinedCostTx extends MinedCostRow {
  txHash: string;
  kind: string;
  blockNumber: number;
  status: string;
}

/** The read queries of statements (src/statements) and the record of `statement.ready` events. */
export interface StatementRepository {
  /** Transactions of `network` mined in blocks `fromBlock`..`toBlock`, in chain order. */
  minedTxs(network: string, fromBlock: number, toBlock: number): Promise<MinedTx[]>;
  /** Store `tid`'s payments, done refunds, reward claims and give-backs, and the x402 payments into its settlement account, carried by `txHashes`. */
  rowsOf(tid: string, txHashes: readonly string[]): Promise<StatementRow[]>;
  /** Relayed transactions of `networks` mined in blocks of timestamp [fromSec, toSec), with their costs. */
  minedBetween(networks: readonly string[], fromSec: number, toSec: number): Promise<MinedCostTx[]>;
  /** Every store: its tid, settlement account and when it was added (ms). */
  stores(): Promise<Array<{ tid: string; settlementAddress: string; createdAt: number }>>;
  /** The (tid, date) pairs of `dates` recorded already, as `tid|date`. */
  readyDays(dates: readonly string[]): Promise<Set<string>>;
  /** Records (tid, date) and writes `event` with it, once: false when it was recorded already. */
  markReady(tid: string, date: string, event: NewWebhookEvent, now: number): Promise<boolean>;
}

export function createStatementRepository(db: Db): StatementRepository {
  return {
    async minedTxs(network, fromBlock, toBlock) {
      const rows = await db.selectFrom('chain_txs').select(['tx_hash', 'block_number', 'tx_index', 'block_timestamp'])
        .where('network', '=', network).where('block_number', '>=', fromBlock).where('block_number', '<=', toBlock)
        .orderBy('block_number').orderBy('tx_index').execute();
      return rows.map((r) => ({
        txHash: r.tx_hash, blockNumber: Number(r.block_number), txIndex: Number(r.tx_index ?? 0),
        blockTimestamp: r.block_timestamp === null ? null : Number(r.block_timestamp),
      }));
    },

    async rowsOf(tid, txHashes) {
      if (txHashes.length === 0) return [];
      const hashes = [...txHashes];
      const payments = await db.selectFrom('payments').select([
        'id', 'tran_no', 'approval_no', 'transfer_transaction_id', 'contract_address', 'token_symbol', 'token_amount', 'exchange_amount',
        'exchange_currency', 'exchange_rate', 'user_address',
      ]).where('transfer_transaction_id', 'in', hashes).where('tid', '=', tid).where('status', '=', 'approved').execute();
      const refunds = await db.selectFrom('payment_cancellations as c').innerJoin('payments as p', 'p.id', 'c.payment_id').select([
        'c.id', 'p.tran_no', 'c.cancel_no', 'c.transfer_transaction_id', 'p.contract_address', 'p.token_symbol', 'c.token_amount',
        'c.exchange_amount', 'p.exchange_currency', 'p.exchange_rate', 'p.user_address',
      ]).where('c.transfer_transaction_id', 'in', hashes).where('p.tid', '=', tid).where('c.status', '=', 'done').execute();
      const rewardColumns = [
        'id', 'cancel_no', 'claim_transaction_id', 'cancel_transaction_id', 'contract_address', 'token_symbol', 'token_amount',
        'exchange_amount', 'exchange_currency', 'exchange_rate', 'user_address',
      ] as const;
      const claims = await db.selectFrom('rewards').select(rewardColumns)
        .where('claim_transaction_id', 'in', hashes).where('tid', '=', tid).where('status', 'in', ['claimed', 'canceling', 'canceled']).execute();
      const givenBack = await db.selectFrom('rewards').select(rewardColumns)
        .where('cancel_transaction_id', 'in', hashes).where('tid', '=', tid).where('status', '=', 'canceled').execute();
      // x402 payments settled into the store's settlement account, whichever facilitator key took them (0020: by tx_hash).
      const account = (await db.selectFrom('stores').select('settlement_address').where('tid', '=', tid).executeTakeFirst())?.settlement_address;
      const x402 = account === undefined ? [] : await db.selectFrom('x402_settlements').select(['nonce', 'payer', 'asset', 'amount', 'tx_hash'])
        .where('tx_hash', 'in', hashes).where('status', '=', 'settled').where(sql<string>`lower(pay_to)`, '=', account.toLowerCase()).execute();
      return [
        ...payments.map((p): StatementRow => ({
          kind: 'payment', sourceId: p.id, reference: p.tran_no, approvalNo: p.approval_no, txHash: p.transfer_transaction_id ?? '',
          contractAddress: p.contract_address ?? '', tokenSymbol: p.token_symbol ?? '', tokenAmount: p.token_amount ?? '0',
          exchangeAmount: p.exchange_amount, exchangeCurrency: p.exchange_currency, exchangeRate: p.exchange_rate, counterparty: p.user_address ?? '',
        })),
        ...refunds.map((c): StatementRow => ({
          kind: 'refund', sourceId: c.id, reference: c.tran_no, approvalNo: c.cancel_no, txHash: c.transfer_transaction_id ?? '',
          contractAddress: c.contract_address ?? '', tokenSymbol: c.token_symbol ?? '', tokenAmount: c.token_amount,
          exchangeAmount: c.exchange_amount, exchangeCurrency: c.exchange_currency, exchangeRate: c.exchange_rate, counterparty: c.user_address ?? '',
        })),
        ...claims.map((r): StatementRow => ({
          kind: 'reward', sourceId: r.id, reference: r.id, approvalNo: null, txHash: r.claim_transaction_id ?? '',
          contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount,
          exchangeAmount: r.exchange_amount, exchangeCurrency: r.exchange_currency, exchangeRate: r.exchange_rate, counterparty: r.user_address ?? '',
        })),
        ...givenBack.map((r): StatementRow => ({
          kind: 'reward_cancellation', sourceId: r.id, reference: r.id, approvalNo: r.cancel_no, txHash: r.cancel_transaction_id ?? '',
          contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount,
          exchangeAmount: r.exchange_amount, exchangeCurrency: r.exchange_currency, exchangeRate: r.exchange_rate, counterparty: r.user_address ?? '',
        })),
        ...x402.map((x): StatementRow => ({
          kind: 'x402', sourceId: x.nonce, reference: `${x.payer}/${x.nonce}`, approvalNo: null, txHash: x.tx_hash ?? '',
          contractAddress: x.asset, tokenSymbol: '', tokenAmount: x.amount, exchangeAmount: null, exchangeCurrency: null, exchangeRate: null, counterparty: x.payer,
        })),
      ];
    },

    async minedBetween(networks, fromSec, toSec) {
      const rows = await db.selectFrom('chain_txs as c')
        .select(['c.network', 'c.tx_hash', 'c.kind', 'c.block_number', 'c.status', 'c.gas_used', 'c.fee_wei', 'c.l1_fee_wei', 'c.operator_fee_wei', usedAuthorizations.all.as('transfers'), usedAuthorizations.x402.as('x402_transfers')])
        .where('c.network', 'in', networks).where('c.status', '!=', 'signed')
        .where('c.block_timestamp', '>=', fromSec).where('c.block_timestamp', '<', toSec)
        .orderBy('c.network').orderBy('c.block_number').orderBy('c.tx_index').execute();
      return rows.map((r) => ({
        network: r.network, txHash: r.tx_hash, kind: r.kind, blockNumber: Number(r.block_number), status: r.status,
        gasUsed: r.gas_used === null ? null : String(r.gas_used), feeWei: r.fee_wei, l1FeeWei: r.l1_fee_wei, operatorFeeWei: r.operator_fee_wei,
        transfers: Number(r.transfers),
        x402Transfers: Number(r.x402_transfers),
      }));
    },

    async stores() {
      const rows = await db.selectFrom('stores').select(['tid', 'settlement_address', 'created_at']).orderBy('tid').execute();
      return rows.map((r) => ({ tid: r.tid, settlementAddress: r.settlement_address, createdAt: Number(r.created_at) }));
    },

    async readyDays(dates) {
      if (dates.length === 0) return new Set();
      const rows = await db.selectFrom('statement_days').select(['tid', 'statement_date']).where('statement_date', 'in', [...dates]).execute();
      return new Set(rows.map((r) => `${r.tid}|${r.statement_date}`));
    },

    async markReady(tid, date, event, now) {
      return db.transaction().execute(async (trx) => {
        const inserted = await trx.insertInto('statement_days').values({ tid, statement_date: date, created_at: now })
          .onConflict((oc) => oc.columns(['tid', 'statement_date']).doNothing()).executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) !== 1) return false;
        await appendWebhookEvent(trx, event, now);
        return true;
      });
    },
  };
}
