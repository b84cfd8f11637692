import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { ReceiptKind, ReceiptsTable } from './schema.ts';

/** A transfer a receipt is issued for: an approved payment, a done cancellation, a claimed reward or a settled x402 payment. */
export interface ReceiptSource {
  kind: ReceiptKind;
  /** payments.id, payment_cancellations.id, rewards.id or x402_settlements.id. */
  sourceId: string;
  /** The store; for an x402 payment the store of the facilitator key ('' when it names none). */
  tid: string;
  /** tran_no (payment, cancellation), reward_id (reward claim) or the authorization's nonce (x402). */
  reference: string;
  network: string;
  contractAddress: string;
  tokenSymbol: string;
  /** Base units moved by the transfer. */
  tokenAmount: string;
  /** The transfer's sender and receiver. */
  fromAddress: string;
  toAddress: string;
  /** The account the receipt is for: the payer of a payment, the receiver of a refund or reward. */
  userAddress: string;
  transactionId: string;
  /** Approval (or cancellation) number; a reward claim has none. */
  approvalNo: string | null;
  /** `yyyyMMddHHmmss` in the platform's time zone, or the epoch ms of a reward claim. */
  approvalDate: string | null;
  claimedAt: number | null;
  exchangeAmount: string | null;
  exchangeCurrency: string;
  /** For a cancellation: the payment's approval number. */
  paymentApprovalNo: string | null;
  /** When it happened (ms): the order of a user's list. */
  occurredAt: number;
}

export interface ReceiptRecord {
  id: string;
  kind: ReceiptKind;
  sourceId: string;
  tid: string;
  reference: string;
  userAddress: string;
  transactionId: string;
  issuer: string;
  credentialJwt: string;
  issuedAt: number;
}

/** Receipts and the read queries that find what they are receipts of (payments, cancellations, rewards are read only). */
export interface ReceiptRepository {
  /** The approved payment `tranNo` of store `tid` and its done cancellations, oldest first; [] when none is approved. */
  sourcesOfPayment(tid: string, tranNo: string): Promise<ReceiptSource[]>;
  /** The claim of reward `rewardId` of store `tid`, once claimed. */
  sourceOfRewardClaim(tid: string, rewardId: string): Promise<ReceiptSource | undefined>;
  /** Every approval, done refund and reward claim of `userAddress`, newest first, at most `limit`. */
  sourcesOfUser(userAddress: string, limit: number): Promise<ReceiptSource[]>;
  /** The x402 payment with this id (x402_settlements.id: network, token, payer, nonce), once settled. */
  sourceOfX402(id: string): Promise<ReceiptSource | undefined>;
  /** Nonces of x402 payments accepted since `since` (epoch ms), settled, with no receipt: oldest first, at most `limit`. */
  x402WithoutReceipt(since: number, limit: number): Promise<string[]>;
  findReceipt(kind: ReceiptKind, sourceId: string): Promise<ReceiptRecord | undefined>;
  /** Keeps `receipt` unless one of its (kind, sourceId) exists; answers the one kept. */
  insertReceipt(receipt: ReceiptRecord): Promise<ReceiptRecord>;
}

const toRecord = (row: ReceiptsTable): ReceiptRecord => ({
  id: row.id, kind: row.kind, sourceId: row.source_id, tid: row.tid, reference: row.reference, userAddress: row.user_address,
  transactionId: row.transaction_id, issuer: row.issuer, credentialJwt: row.credential_jwt, issuedAt: Number(row.issued_at),
});

interface PaymentRow {
  id: string; tid: string; tran_no: string; network: string; contract_address: string | null; token_symbol: string | null;
  token_amount: string | null; user_address: string | null; settlement_address: string; transfer_transaction_id: string | null;
  approval_no: string | null; approval_date: string | null; exchange_amount: string; exchange_currency: string; created_at: number;
}

function paymentSource(p: PaymentRow): ReceiptSource | undefined {
  if (!p.contract_address || !p.token_symbol || !p.token_amount || !p.user_address || !p.transfer_transaction_id) return undefined;
  return {
    kind: 'payment', sourceId: p.id, tid: p.tid, reference: p.tran_no, network: p.network, contractAddress: p.contract_address,
    tokenSymbol: p.token_symbol, tokenAmount: p.token_amount, fromAddress: p.user_address, toAddress: p.settlement_address,
    userAddress: p.user_address, transactionId: p.transfer_transaction_id, approvalNo: p.approval_no, approvalDate: p.approval_date,
    claimedAt: null, exchangeAmount: p.exchange_amount, exchangeCurrency: p.exchange_currency, paymentApprovalNo: null,
    occurredAt: Number(p.created_at),
  };
}

export function createReceiptRepository(db: Db): ReceiptRepository {
  const paymentColumns = [
    'payments.id', 'payments.tid', 'payments.tran_no', 'payments.network', 'payments.contract_address', 'payments.token_symbol',
    'payments.token_amount', 'payments.user_address', 'payments.settlement_address', 'payments.transfer_transaction_id',
    'payments.approval_no', 'payments.approval_date', 'payments.exchange_amount', 'payments.exchange_currency', 'payments.created_at',
  ] as const;

  const cancellationsOf = async (payments: PaymentRow[]): Promise<ReceiptSource[]> => {
    if (payments.length === 0) return [];
    const byId = new Map(payments.map((p) => [p.id, p]));
    const rows = await db.selectFrom('payment_cancellations').selectAll()
      .where('payment_id', 'in', [...byId.keys()]).where('status', '=', 'done').orderBy('created_at').execute();
    return rows.flatMap((c) => {
      const p = byId.get(c.payment_id);
      if (!p?.contract_address || !p.token_symbol || !p.user_address || !c.transfer_transaction_id) return [];
      return [{
        kind: 'cancellation' as const, sourceId: c.id, tid: p.tid, reference: p.tran_no, network: p.network, contractAddress: p.contract_address,
        tokenSymbol: p.token_symbol, tokenAmount: c.token_amount, fromAddress: p.settlement_address, toAddress: p.user_address,
        userAddress: p.user_address, transactionId: c.transfer_transaction_id, approvalNo: c.cancel_no, approvalDate: c.cancel_date,
        claimedAt: null, exchangeAmount: c.exchange_amount, exchangeCurrency: p.exchange_currency, paymentApprovalNo: p.approval_no,
        occurredAt: Number(c.updated_at),
      }];
    });
  };

  const rewardQuery = () => db.selectFrom('rewards').selectAll().where('status', '=', 'claimed');
  type RewardRow = Awaited<ReturnType<ReturnType<typeof rewardQuery>['execute']>>[number];
  const rewardSource = (r: RewardRow): ReceiptSource | undefined => {
    if (!r.user_address || !r.claim_transaction_id || r.claimed_at === null) return undefined;
    return {
      kind: 'reward_claim', sourceId: r.id, tid: r.tid, reference: r.id, network: r.network, contractAddress: r.contract_address,
      tokenSymbol: r.token_symbol, tokenAmount: r.token_amount, fromAddress: r.settlement_address, toAddress: r.user_address,
      userAddress: r.user_address, transactionId: r.claim_transaction_id, approvalNo: null, approvalDate: null,
      claimedAt: Number(r.claimed_at), exchangeAmount: r.exchange_amount, exchangeCurrency: r.exchange_currency, paymentApprovalNo: null,
      occurredAt: Number(r.claimed_at),
    };
  };

  const x402Query = () => db.selectFrom('x402_settlements')
    .leftJoin('facilitator_keys', 'facilitator_keys.id', 'x402_settlements.key_id')
    .leftJoin('tokens', (join) => join.onRef('tokens.network', '=', 'x402_settlements.network').onRef('tokens.contract_address', '=', 'x402_settlements.asset'))
    .leftJoin('settlement_tokens', (join) => join.onRef('settlement_tokens.network', '=', 'x402_settlements.network')
      .onRef('settlement_tokens.contract_address', '=', 'x402_settlements.asset'))
    .select(['x402_settlements.id', 'x402_settlements.nonce', 'x402_settlements.network', 'x402_settlements.asset', 'x402_settlements.amount', 'x402_settlements.payer',
      'x402_settlements.pay_to', 'x402_settlements.tx_hash', 'x402_settlements.updated_at', 'facilitator_keys.tid', 'tokens.symbol as token_symbol',
      'settlement_tokens.symbol as listed_symbol'])
    .where('x402_settlements.status', '=', 'settled');
  type X402Row = Awaited<ReturnType<ReturnType<typeof x402Query>['execute']>>[number];
  const x402Source = (r: X402Row): ReceiptSource | undefined => {
    if (!r.tx_hash) return undefined;
    return {
      kind: 'x402', sourceId: r.id, tid: r.tid ?? '', reference: r.nonce, network: r.network, contractAddress: r.asset,
      tokenSymbol: r.token_symbol ?? r.listed_symbol ?? '', tokenAmount: r.amount, fromAddress: r.payer, toAddress: r.pay_to, userAddress: r.payer,
      transactionId: r.tx_hash, approvalNo: null, approvalDate: null, claimedAt: Number(r.updated_at), exchangeAmount: null, exchangeCurrency: '',
      paymentApprovalNo: null, occurredAt: Number(r.updated_at),
    };
  };

  const findReceipt = async (kind: ReceiptKind, sourceId: string) => {
    const row = await db.selectFrom('receipts').selectAll().where('kind', '=', kind).where('source_id', '=', sourceId).executeTakeFirst();
    return row && toRecord(row);
  };

  return {
    async sourcesOfPayment(tid, tranNo) {
      const payment = await db.selectFrom('payments').select(paymentColumns)
        .where('tid', '=', tid).where('tran_no', '=', tranNo).where('status', '=', 'approved').executeTakeFirst();
      if (!payment) return [];
      const approval = paymentSource(payment);
      return approval ? [approval, ...(await cancellationsOf([payment]))] : [];
    },

    async sourceOfRewardClaim(tid, rewardId) {
      const row = await rewardQuery().where('tid', '=', tid).where('id', '=', rewardId).executeTakeFirst();
      return row && rewardSource(row);
    },

    async sourcesOfUser(userAddress, limit) {
      // Addresses are compared without letter case: a POS may send them in any.
      const address = userAddress.toLowerCase();
      const payments = await db.selectFrom('payments').select(paymentColumns)
        .where(sql<string>`lower(user_address)`, '=', address).where('status', '=', 'approved')
        .orderBy('created_at', 'desc').limit(limit).execute();
      const rewards = await rewardQuery().where(sql<string>`lower(user_address)`, '=', address)
        .orderBy('claimed_at', 'desc').limit(limit).execute();
      const x402 = await x402Query().where(sql<string>`lower(x402_settlements.payer)`, '=', address)
        .orderBy('x402_settlements.updated_at', 'desc').limit(limit).execute();
      const sources = [
        ...payments.flatMap((p) => paymentSource(p) ?? []),
        ...(await cancellationsOf(payments)),
        ...rewards.flatMap((r) => rewardSource(r) ?? []),
        ...x402.flatMap((r) => x402Source(r) ?? []),
      ];
      return sources.sort((a, b) => b.occurredAt - a.occurredAt).slice(0, limit);
    },

    async sourceOfX402(id) {
      const row = await x402Query().where('x402_settlements.id', '=', id.toLowerCase()).executeTakeFirst();
      return row && x402Source(row);
    },

    async x402WithoutReceipt(since, limit) {
      // By the (status, created_at) index: the settled settlements of the window, each looked up in the receipts' (kind, source) key.
      const rows = await db.selectFrom('x402_settlements').select('x402_settlements.id')
        .leftJoin('receipts', (join) => join.on('receipts.kind', '=', 'x402').onRef('receipts.source_id', '=', 'x402_settlements.id'))
        .where('x402_settlements.status', '=', 'settled').where('x402_settlements.created_at', '>=', since)
        .where('x402_settlements.tx_hash', 'is not', null).where('receipts.id', 'is', null)
        .orderBy('x402_settlements.created_at').limit(limit).execute();
      return rows.map((r) => r.id);
    },

    findReceipt,

    async insertReceipt(r) {
      await db.insertInto('receipts').values({
        id: r.id, kind: r.kind, source_id: r.sourceId, tid: r.tid, reference: r.reference, user_address: r.userAddress,
        transaction_id: r.transactionId, issuer: r.issuer, credential_jwt: r.credentialJwt, issued_at: r.issuedAt,
      }).onConflict((oc) => oc.columns(['kind', 'source_id']).doNothing()).execute();
      const kept = await findReceipt(r.kind, r.sourceId);
      if (!kept) throw new Error(`receipt ${r.kind} ${r.sourceId} neither inserted nor found`);
      return kept;
    },
  };
}
