import type { Db } from './db.ts';
import type { PaymentCancellationsTable, PaymentCancellationStatus, PaymentsTable, PaymentStatus } from './schema.ts';
import { withWebhookEvent, type NewWebhookEvent } from './webhook-repository.ts';

export interface PaymentRecord {
  id: string;
  tid: string;
  tranNo: string;
  status: PaymentStatus;
  userUuid: string;
  userAddress: string | null;
  settlementAddress: string;
  network: string;
  contractAddress: string | null;
  tokenSymbol: string | null;
  /** Base units. */
  tokenAmount: string | null;
  exchangeAmount: string;
  exchangeCurrency: string;
  exchangeRate: string | null;
  exchangeDateIndex: string | null;
  transferTransactionId: string | null;
  approvalNo: string | null;
  approvalDate: string | null;
  /** Base units refunded or being refunded. */
  refundedAmount: string;
  failureCode: string | null;
  updatedAt: number;
  /** The instance running the attempt (Redis pairing desk id), when pairing goes through Redis. */
  runBy: string | null;
}

export type NewPayment = Pick<PaymentRecord, 'id' | 'tid' | 'tranNo' | 'userUuid' | 'settlementAddress' | 'network' | 'exchangeAmount' | 'exchangeCurrency'>
  & { runBy?: string | undefined };

export interface PaymentQuote {
  userAddress: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAmount: string;
  exchangeRate: string;
  exchangeDateIndex: string;
}

export interface CancellationRecord {
  id: string;
  paymentId: string;
  status: PaymentCancellationStatus;
  tokenAmount: string;
  exchangeAmount: string | null;
  transferTransactionId: string | null;
  cancelNo: string | null;
  cancelDate: string | null;
  updatedAt: number;
}

/** Payments and their cancellations. (tid, tran_no) is unique: the idempotency key of a POS. */
export interface PaymentRepository {
  /**
   * Claims (tid, tranNo) for a new attempt: inserts it as pending, or takes over a failed attempt.
   * Otherwise answers the payment that holds it (approved, or pending elsewhere).
   */
  claimTranNo(payment: NewPayment, now: number): Promise<{ claimed: true } | { claimed: false; existing: PaymentRecord }>;
  recordQuote(id: string, quote: PaymentQuote, now: number): Promise<void>;
  /**
   * Only a pending payment is approved: false, nothing written, when it was approved (or failed)
   * already, e.g. by a POS retry on another instance settling it at the same time. `event` (a store
   * webhook) is written in the same transaction as the change.
   */
  markApproved(id: string, approval: { transferTransactionId: string; approvalNo: string; approvalDate: string }, now: number, event?: NewWebhookEvent): Promise<boolean>;
  /** Only a pending payment fails; an approved one stays approved. `event` is written only when it failed now. */
  markFailed(id: string, failureCode: string, now: number, event?: NewWebhookEvent): Promise<void>;
  findByTranNo(tid: string, tranNo: string): Promise<PaymentRecord | undefined>;
  /**
   * A store's approved payments carried by a transaction, oldest first: several when their transfers
   * shared one settlement batch.
   */
  findApprovedByTransferTransaction(tid: string, transferTransactionId: string): Promise<PaymentRecord[]>;
  /**
   * Reserves a refund: compare-and-set of the payment's refunded total from `expected` to `next` and
   * the pending cancellation that holds the difference, in one transaction (a crash leaves both or
   * neither); false, nothing written, when another cancellation changed the total first.
   */
  reserveRefund(paymentId: string, expected: string, next: string, cancellation: { id: string; tokenAmount: string; exchangeAmount: string | null }, now: number): Promise<boolean>;
  /** Ends a pending cancellation as done; false when it was no longer pending. */
  completeCancellation(id: string, done: { transferTransactionId: string; cancelNo: string; cancelDate: string }, now: number, event?: NewWebhookEvent): Promise<boolean>;
  /** Ends a pending cancellation as failed and gives its amount back to the payment's refundable total, in one transaction; false when it was no longer pending. */
  failCancellation(id: string, now: number): Promise<boolean>;
  findCancellation(id: string): Promise<CancellationRecord | undefined>;
  /** Cancellations still pending that nothing has touched since `before` (their run was interrupted). */
  listStaleCancellations(before: number): Promise<CancellationRecord[]>;
  /** Payments still pending that nothing has touched since `before`, oldest first, at most 100 (their run was interrupted). */
  listStalePayments(before: number): Promise<PaymentRecord[]>;
  findPayment(id: string): Promise<PaymentRecord | undefined>;
  listCancellations(paymentId: string): Promise<CancellationRecord[]>;
}

const toPayment = (row: PaymentsTable): PaymentRecord => ({
  id: row.id, tid: row.tid, tranNo: row.tran_no, status: row.status, userUuid: row.user_uuid, userAddress: row.user_address,
  settlementAddress: row.settlement_address, network: row.network, contractAddress: row.contract_address, tokenSymbol: row.token_symbol,
  tokenAmount: row.token_amount, exchangeAmount: row.exchange_amount, exchangeCurrency: row.exchange_currency, exchangeRate: row.exchange_rate,
  exchangeDateIndex: row.exchange_date_index, transferTransactionId: row.transfer_transaction_id, approvalNo: row.approval_no,
  approvalDate: row.approval_date, refundedAmount: row.refunded_amount, failureCode: row.failure_code, updatedAt: Number(row.updated_at),
  runBy: row.run_by ?? null,
});

const toCancellation = (row: PaymentCancellationsTable): CancellationRecord => ({
  id: row.id, paymentId: row.payment_id, status: row.status, tokenAmount: row.token_amount, exchangeAmount: row.exchange_amount,
  transferTransactionId: row.transfer_transaction_id, cancelNo: row.cancel_no, cancelDate: row.cancel_date, updatedAt: Number(row.updated_at),
});

const updated = (result: { numUpdatedRows: bigint }) => Number(result.numUpdatedRows) === 1;

export function createPaymentRepository(db: Db): PaymentRepository {
  const fresh = (p: NewPayment, now: number) => ({
    id: p.id, tid: p.tid, tran_no: p.tranNo, status: 'pending' as const, user_uuid: p.userUuid, user_address: null,
    settlement_address: p.settlementAddress, network: p.network, contract_address: null, token_symbol: null, token_amount: null,
    exchange_amount: p.exchangeAmount, exchange_currency: p.exchangeCurrency, exchange_rate: null, exchange_date_index: null,
    transfer_transaction_id: null, approval_no: null, approval_date: null, refunded_amount: '0', failure_code: null,
    created_at: now, updated_at: now, run_by: p.runBy ?? null,
  });
  const findByTranNo = async (tid: string, tranNo: string) => {
    const row = await db.selectFrom('payments').selectAll().where('tid', '=', tid).where('tran_no', '=', tranNo).executeTakeFirst();
    return row && toPayment(row);
  };

  return {
    async claimTranNo(payment, now) {
      const inserted = await db.insertInto('payments').values(fresh(payment, now))
        .onConflict((oc) => oc.columns(['tid', 'tran_no']).doNothing()).executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { claimed: true };
      const existing = await findByTranNo(payment.tid, payment.tranNo);
      if (!existing) return this.claimTranNo(payment, now);
      if (existing.status === 'failed') {
        // A failed attempt moved nothing: the POS may try the same tran_no again, as a new attempt.
        const { tid: _tid, tran_no: _tranNo, created_at: _created, ...retry } = fresh(payment, now);
        const taken = await db.updateTable('payments').set(retry)
          .where('id', '=', existing.id).where('status', '=', 'failed').executeTakeFirst();
        if (updated(taken)) return { claimed: true };
        return this.claimTranNo(payment, now);
      }
      return { claimed: false, existing };
    },
    async recordQuote(id, q, now) {
      await db.updateTable('payments').set({
        user_address: q.userAddress, contract_address: q.contractAddress, token_symbol: q.tokenSymbol, token_amount: q.tokenAmount,
        exchange_rate: q.exchangeRate, exchange_date_index: q.exchangeDateIndex, updated_at: now,
      }).where('id', '=', id).execute();
    },
    async markApproved(id, approval, now, event) {
      return withWebhookEvent(db, event, now, async (trx) => updated(await trx.updateTable('payments').set({
        status: 'approved', transfer_transaction_id: approval.transferTransactionId, approval_no: approval.approvalNo,
        approval_date: approval.approvalDate, updated_at: now,
      }).where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()));
    },
    async markFailed(id, failureCode, now, event) {
      await withWebhookEvent(db, event, now, async (trx) => updated(await trx.updateTable('payments').set({ status: 'failed', failure_code: failureCode, updated_at: now })
        .where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()));
    },
    findByTranNo,
    async findApprovedByTransferTransaction(tid, transferTransactionId) {
      const rows = await db.selectFrom('payments').selectAll()
        .where('transfer_transaction_id', '=', transferTransactionId).where('tid', '=', tid).where('status', '=', 'approved')
        .orderBy('created_at').orderBy('id').execute();
      return rows.map(toPayment);
    },
    async reserveRefund(paymentId, expected, next, c, now) {
      return db.transaction().execute(async (trx) => {
        if (!updated(await trx.updateTable('payments').set({ refunded_amount: next, updated_at: now })
          .where('id', '=', paymentId).where('refunded_amount', '=', expected).executeTakeFirst())) return false;
        await trx.insertInto('payment_cancellations').values({
          id: c.id, payment_id: paymentId, status: 'pending', token_amount: c.tokenAmount, exchange_amount: c.exchangeAmount,
          transfer_transaction_id: null, cancel_no: null, cancel_date: null, created_at: now, updated_at: now,
        }).execute();
        return true;
      });
    },
    async completeCancellation(id, done, now, event) {
      return withWebhookEvent(db, event, now, async (trx) => updated(await trx.updateTable('payment_cancellations').set({
        status: 'done', transfer_transaction_id: done.transferTransactionId, cancel_no: done.cancelNo, cancel_date: done.cancelDate, updated_at: now,
      }).where('id', '=', id).where('status', '=', 'pending').executeTakeFirst()));
    },
    async failCancellation(id, now) {
      return db.transaction().execute(async (trx) => {
        const row = await trx.updateTable('payment_cancellations').set({ status: 'failed', updated_at: now })
          .where('id', '=', id).where('status', '=', 'pending').returning(['payment_id', 'token_amount']).executeTakeFirst();
        if (!row) return false;
        // A no-op update takes the payment row's write lock first (PostgreSQL; SQLite's is the
        // database's): no other reservation changes the total between the read and the write.
        await trx.updateTable('payments').set((eb) => ({ refunded_amount: eb.ref('refunded_amount') })).where('id', '=', row.payment_id).execute();
        const payment = await trx.selectFrom('payments').select('refunded_amount').where('id', '=', row.payment_id).executeTakeFirstOrThrow();
        await trx.updateTable('payments').set({ refunded_amount: (BigInt(payment.refunded_amount) - BigInt(row.token_amount)).toString(), updated_at: now })
          .where('id', '=', row.payment_id).execute();
        return true;
      });
    },
    async findCancellation(id) {
      const row = await db.selectFrom('payment_cancellations').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toCancellation(row);
    },
    async listStaleCancellations(before) {
      const rows = await db.selectFrom('payment_cancellations').selectAll()
        .where('status', '=', 'pending').where('updated_at', '<', before).orderBy('created_at').limit(100).execute();
      return rows.map(toCancellation);
    },
    async listStalePayments(before) {
      const rows = await db.selectFrom('payments').selectAll()
        .where('status', '=', 'pending').where('updated_at', '<', before).orderBy('created_at').limit(100).execute();
      return rows.map(toPayment);
    },
    async findPayment(id) {
      const row = await db.selectFrom('payments').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toPayment(row);
    },
    async listCancellations(paymentId) {
      const rows = await db.selectFrom('payment_cancellations').selectAll()
        .where('payment_id', '=', paymentId).where('status', '=', 'done').orderBy('created_at').execute();
      return rows.map(toCancellation);
    },
  };
}
