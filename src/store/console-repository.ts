import { sql } from 'kysely';
import type { Db } from './db.ts';
import type { PaymentStatus, RewardStatus, X402SettlementStatus } from './schema.ts';

/** Approved and failed payments created in one minute (`minute`: epoch ms of its start). */
export interface MinuteCount {
  minute: number;
  status: PaymentStatus;
  count: number;
}

/** Payments by how they ended: status and, for a failure, its domain code. */
export interface OutcomeCount {
  status: PaymentStatus;
  failureCode: string | null;
  count: number;
}

/** Base-unit amounts of one token (sums are made in bigint: SQL sums of 18-decimal amounts overflow). */
export interface TokenAmountRow {
  network: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAmount: string;
}

export interface RewardRow extends TokenAmountRow {
  status: RewardStatus;
  claimed: boolean;
}

/** A payment accepted by the x402 facilitator (docs/x402.md): counted apart from POS payments. */
export interface X402Row extends TokenAmountRow {
  status: X402SettlementStatus;
}

export interface StoreRow {
  tid: string;
  name: string;
  settlementAddress: string;
  approved: number;
}

export interface RelayerLaneRow {
  network: string;
  relayer: string;
  pending: number;
  total: number;
}

/** A relayed transaction mined: its receipt's gas and fee (migration 0016), and the transfers it executed. */
export interface MinedCostRow {
  network: string;
  gasUsed: string | null;
  /** gasUsed × effectiveGasPrice (execution), wei (decimal text). */
  feeWei: string | null;
  /** OP stack: the receipt's L1 data fee and the operator fee, wei (decimal text); null elsewhere. */
  l1FeeWei?: string | null;
  operatorFeeWei?: string | null;
  /** Authorizations used by this transaction (0 for a mint, a deployment, a cancellation). */
  transfers: number;
  /** Of them, x402 payments (the facilitator's); the rest are POS payments, refunds and rewards. */
  x402Transfers: number;
  /** What the relayer sent it for: `settlement`, `deploy`, `mint`, `cancel-authorization`. */
  kind: string;
}

/** Authorizations a mined transaction used, all and the x402 ones (SQL over `chain_txs as c`). */
export const usedAuthorizations = {
  all: sql<number>`(select count(*) from authorizations a where a.tx_hash = c.tx_hash and a.network = c.network and a.status = 'used')`,
  // An x402 payment's authorization is reserved under a reference of its own, `x402:…` (src/x402/carry-settlement.ts).
  x402: sql<number>`(select count(*) from authorizations a where a.tx_hash = c.tx_hash and a.network = c.network and a.status = 'used' and a.reference like 'x402:%')`,
};

/** One row of the console's tables: a payment, a refund or a reward. */
export interface ActivityRow {
  kind: 'payment' | 'reward' | 'x402';
  tid: string;
  /** tran_no of a payment, reward_id of a reward. */
  reference: string;
  status: string;
  failureCode: string | null;
  network: string;
  contractAddress: string | null;
  tokenSymbol: string | null;
  tokenAmount: string | null;
  userAddress: string | null;
  transactionId: string | null;
  approvalNo: string | null;
  createdAt: number;
}

/** The read queries of the operator console (src/console): nothing here writes. */
export interface ConsoleRepository {
  paymentsPerMinute(since: number): Promise<MinuteCount[]>;
  /** Each of these five: every record, or those created within `range` (epoch ms, `to` excluded: a day of TIME_ZONE). */
  paymentOutcomes(range?: TimeRange): Promise<OutcomeCount[]>;
  approvedAmounts(range?: TimeRange): Promise<TokenAmountRow[]>;
  refundAmounts(range?: TimeRange): Promise<TokenAmountRow[]>;
  rewards(range?: TimeRange): Promise<RewardRow[]>;
  x402Settlements(range?: TimeRange): Promise<X402Row[]>;
  stores(): Promise<StoreRow[]>;
  relayerLanes(): Promise<RelayerLaneRow[]>;
  /** Relayed transactions of `networks` mined (succeeded or reverted: both paid gas) in blocks of `sinceMs` (block timestamp) or later. */
  minedSince(networks: readonly string[], sinceMs: number): Promise<MinedCostRow[]>;
  /** created_at of the oldest journaled transaction not yet known mined, if any. */
  oldestPendingOperation(): Promise<number | undefined>;
  recentActivity(limit: number): Promise<ActivityRow[]>;
  /**
   * Payments, rewards and x402 payments by tran_no, reward_id, transaction id (payment, refund,
   * claim, x402 settlement), user (id, uuid or address; an x402 payer) or store tid (an x402 key's store).
   */
  search(query: string, limit: number): Promise<ActivityRow[]>;
}

const minuteMs = 60_000;

/** Epoch ms: `from` included, `to` excluded. */
export interface TimeRange {
  from: number;
  to: number;
}

export function createConsoleRepository(db: Db): ConsoleRepository {
  const paymentActivity = () => db.selectFrom('payments').select([
    'tid', 'tran_no', 'status', 'failure_code', 'network', 'contract_address', 'token_symbol', 'token_amount', 'user_address',
    'transfer_transaction_id', 'approval_no', 'created_at',
  ]);
  type PaymentActivityRow = Awaited<ReturnType<ReturnType<typeof paymentActivity>['execute']>>[number];
  const fromPayment = (r: PaymentActivityRow): ActivityRow => ({
    kind: 'payment', tid: r.tid, reference: r.tran_no, status: r.status, failureCode: r.failure_code, network: r.network,
    contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount, userAddress: r.user_address,
    transactionId: r.transfer_transaction_id, approvalNo: r.approval_no, createdAt: Number(r.created_at),
  });
  const rewardActivity = () => db.selectFrom('rewards').select([
    'id', 'tid', 'status', 'network', 'contract_address', 'token_symbol', 'token_amount', 'user_address', 'claim_transaction_id', 'created_at',
  ]);
  type RewardActivityRow = Awaited<ReturnType<ReturnType<typeof rewardActivity>['execute']>>[number];
  const fromReward = (r: RewardActivityRow): ActivityRow => ({
    kind: 'reward', tid: r.tid, reference: r.id, status: r.status, failureCode: null, network: r.network, contractAddress: r.contract_address,
    tokenSymbol: r.token_symbol, tokenAmount: r.token_amount, userAddress: r.user_address, transactionId: r.claim_transaction_id,
    approvalNo: null, createdAt: Number(r.created_at),
  });
  const x402Activity = () => db.selectFrom('x402_settlements')
    .leftJoin('facilitator_keys', 'facilitator_keys.id', 'x402_settlements.key_id')
    .leftJoin('tokens', (join) => join.onRef('tokens.network', '=', 'x402_settlements.network').onRef('tokens.contract_address', '=', 'x402_settlements.asset'))
    .select(['x402_settlements.nonce', 'x402_settlements.payer', 'x402_settlements.status', 'x402_settlements.error_reason', 'x402_settlements.network',
      'x402_settlements.asset', 'x402_settlements.amount', 'x402_settlements.tx_hash', 'x402_settlements.created_at', 'facilitator_keys.tid', 'tokens.symbol']);
  type X402ActivityRow = Awaited<ReturnType<ReturnType<typeof x402Activity>['execute']>>[number];
  // An x402 payment is known by its payer and its authorization's nonce (its receipt's reference).
  const fromX402 = (r: X402ActivityRow): ActivityRow => ({
    kind: 'x402', tid: r.tid ?? '', reference: `${r.payer}/${r.nonce}`, status: r.status, failureCode: r.error_reason, network: r.network,
    contractAddress: r.asset, tokenSymbol: r.symbol, tokenAmount: r.amount, userAddress: r.payer, transactionId: r.tx_hash,
    approvalNo: null, createdAt: Number(r.created_at),
  });
  const newestFirst = (rows: ActivityRow[], limit: number) => rows.sort((a, b) => b.createdAt - a.createdAt).slice(0, limit);

  return {
    async paymentsPerMinute(since) {
      // Integer division on both dialects (bigint / integer).
      const minute = sql<number>`created_at / ${sql.lit(minuteMs)}`;
      const rows = await db.selectFrom('payments')
        .select([minute.as('minute'), 'status', (eb) => eb.fn.countAll<number>().as('count')])
        .where('created_at', '>=', since).groupBy([minute, 'status']).execute();
      return rows.map((r) => ({ minute: Number(r.minute) * minuteMs, status: r.status, count: Number(r.count) }));
    },

    async paymentOutcomes(range) {
      const rows = await db.selectFrom('payments').select(['status', 'failure_code', (eb) => eb.fn.countAll<number>().as('count')])
        .$if(range !== undefined, (q) => q.where('created_at', '>=', range!.from).where('created_at', '<', range!.to))
        .groupBy(['status', 'failure_code']).execute();
      return rows.map((r) => ({ status: r.status, failureCode: r.failure_code, count: Number(r.count) }));
    },

    async approvedAmounts(range) {
      const rows = await db.selectFrom('payments').select(['network', 'contract_address', 'token_symbol', 'token_amount'])
        .$if(range !== undefined, (q) => q.where('created_at', '>=', range!.from).where('created_at', '<', range!.to))
        .where('status', '=', 'approved').execute();
      return rows.flatMap((r) => (r.contract_address && r.token_symbol && r.token_amount
        ? [{ network: r.network, contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount }] : []));
    },

    async refundAmounts(range) {
      const rows = await db.selectFrom('payment_cancellations').innerJoin('payments', 'payments.id', 'payment_cancellations.payment_id')
        .select(['payments.network', 'payments.contract_address', 'payments.token_symbol', 'payment_cancellations.token_amount'])
        .$if(range !== undefined, (q) => q.where('payment_cancellations.created_at', '>=', range!.from).where('payment_cancellations.created_at', '<', range!.to))
        .where('payment_cancellations.status', '=', 'done').execute();
      return rows.flatMap((r) => (r.contract_address && r.token_symbol
        ? [{ network: r.network, contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount }] : []));
    },

    async rewards(range) {
      const rows = await db.selectFrom('rewards').select(['status', 'network', 'contract_address', 'token_symbol', 'token_amount', 'claim_transaction_id'])
        .$if(range !== undefined, (q) => q.where('created_at', '>=', range!.from).where('created_at', '<', range!.to)).execute();
      return rows.map((r) => ({
        status: r.status, network: r.network, contractAddress: r.contract_address, tokenSymbol: r.token_symbol, tokenAmount: r.token_amount,
        claimed: r.claim_transaction_id !== null,
      }));
    },

    async x402Settlements(range) {
      const rows = await db.selectFrom('x402_settlements')
        .leftJoin('tokens', (join) => join.onRef('tokens.network', '=', 'x402_settlements.network').onRef('tokens.contract_address', '=', 'x402_settlements.asset'))
        .select(['x402_settlements.status', 'x402_settlements.network', 'x402_settlements.asset', 'x402_settlements.amount', 'tokens.symbol'])
        .$if(range !== undefined, (q) => q.where('x402_settlements.created_at', '>=', range!.from).where('x402_settlements.created_at', '<', range!.to)).execute();
      return rows.map((r) => ({ status: r.status, network: r.network, contractAddress: r.asset, tokenSymbol: r.symbol ?? '', tokenAmount: r.amount }));
    },

    async stores() {
      const approved = db.selectFrom('payments').select(['tid', (eb) => eb.fn.countAll<number>().as('approved')])
        .where('status', '=', 'approved').groupBy('tid').as('approved');
      const rows = await db.selectFrom('stores').leftJoin(approved, 'approved.tid', 'stores.tid')
        .select(['stores.tid', 'stores.name', 'stores.settlement_address', 'approved.approved']).orderBy('stores.tid').execute();
      return rows.map((r) => ({ tid: r.tid, name: r.name, settlementAddress: r.settlement_address, approved: Number(r.approved ?? 0) }));
    },

    async relayerLanes() {
      const pending = sql<number>`sum(case when status = 'signed' then 1 else 0 end)`;
      const rows = await db.selectFrom('chain_txs')
        .select(['network', 'relayer', pending.as('pending'), (eb) => eb.fn.countAll<number>().as('total')])
        .groupBy(['network', 'relayer']).orderBy('network').orderBy('relayer').execute();
      return rows.map((r) => ({ network: r.network, relayer: r.relayer, pending: Number(r.pending), total: Number(r.total) }));
    },

    async minedSince(networks, sinceMs) {
      const rows = await db.selectFrom('chain_txs as c')
        .select(['c.network', 'c.kind', 'c.gas_used', 'c.fee_wei', 'c.l1_fee_wei', 'c.operator_fee_wei', usedAuthorizations.all.as('transfers'), usedAuthorizations.x402.as('x402_transfers')])
        // updated_at (when it was recorded mined, never before its block) narrows on chain_txs_network_updated.
        .where('c.network', 'in', networks).where('c.updated_at', '>=', sinceMs)
        .where('c.status', '!=', 'signed').where('c.block_timestamp', '>=', Math.floor(sinceMs / 1000)).execute();
      return rows.map((r) => ({
        network: r.network, kind: r.kind, gasUsed: r.gas_used === null ? null : String(r.gas_used), feeWei: r.fee_wei,
        l1FeeWei: r.l1_fee_wei, operatorFeeWei: r.operator_fee_wei, transfers: Number(r.transfers), x402Transfers: Number(r.x402_transfers),
      }));
    },

    async oldestPendingOperation() {
      const row = await db.selectFrom('chain_txs').select((eb) => eb.fn.min<number>('created_at').as('oldest'))
        .where('status', '=', 'signed').executeTakeFirst();
      return row?.oldest === null || row?.oldest === undefined ? undefined : Number(row.oldest);
    },

    async recentActivity(limit) {
      const payments = await paymentActivity().orderBy('created_at', 'desc').limit(limit).execute();
      const rewards = await rewardActivity().orderBy('created_at', 'desc').limit(limit).execute();
      const x402 = await x402Activity().orderBy('x402_settlements.created_at', 'desc').limit(limit).execute();
      return newestFirst([...payments.map(fromPayment), ...rewards.map(fromReward), ...x402.map(fromX402)], limit);
    },

    async search(query, limit) {
      const q = query.trim();
      if (!q) return [];
      const lower = q.toLowerCase();
      // A user id searches by the user's wallet address.
      const user = await db.selectFrom('users').select('wallet_address').where('id', '=', q).executeTakeFirst();
      const addresses = [lower, ...(user?.wallet_address ? [user.wallet_address.toLowerCase()] : [])];
      const refunded = db.selectFrom('payment_cancellations').select('payment_id').where(sql<string>`lower(transfer_transaction_id)`, '=', lower);
      const payments = await paymentActivity().where((eb) => eb.or([
        eb('tran_no', '=', q), eb('tid', '=', q), eb('user_uuid', '=', q),
        eb(sql<string>`lower(transfer_transaction_id)`, '=', lower),
        eb(sql<string>`lower(user_address)`, 'in', addresses),
        eb('id', 'in', refunded),
      ])).orderBy('created_at', 'desc').limit(limit).execute();
      const rewards = await rewardActivity().where((eb) => eb.or([
        eb('id', '=', q.toUpperCase()), eb('tid', '=', q),
        eb(sql<string>`lower(claim_transaction_id)`, '=', lower), eb(sql<string>`lower(cancel_transaction_id)`, '=', lower),
        eb(sql<string>`lower(user_address)`, 'in', addresses),
      ])).orderBy('created_at', 'desc').limit(limit).execute();
      const [payer, nonce] = lower.split('/');
      const x402 = await x402Activity().where((eb) => eb.or([
        eb('x402_settlements.nonce', '=', lower), eb(sql<string>`lower(x402_settlements.payer)`, 'in', addresses),
        eb(sql<string>`lower(x402_settlements.tx_hash)`, '=', lower), eb('facilitator_keys.tid', '=', q),
        ...(payer && nonce ? [eb.and([eb(sql<string>`lower(x402_settlements.payer)`, '=', payer), eb('x402_settlements.nonce', '=', nonce)])] : []),
      ])).orderBy('x402_settlements.created_at', 'desc').limit(limit).execute();
      return newestFirst([...payments.map(fromPayment), ...rewards.map(fromReward), ...x402.map(fromX402)], limit);
    },
  };
}
