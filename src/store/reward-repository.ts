import type { Selectable } from 'kysely';
import type { Db } from './db.ts';
import type { RewardsTable, RewardStatus } from './schema.ts';
import { withWebhookEvent, type NewWebhookEvent } from './webhook-repository.ts';

/** A reward as the rewards domain sees it. Token amounts are base-unit decimal strings. */
export interface RewardRecord {
  id: string;
  tid: string;
  rewardReason: string;
  network: string;
  settlementAddress: string;
  contractAddress: string;
  tokenSymbol: string;
  tokenAmount: string;
  exchangeAmount: string;
  exchangeCurrency: string;
  exchangeRate: string;
  exchangeDateIndex: string;
  rewardDate: string;
  expiresAt: number;
  status: RewardStatus;
  userAddress: string | null;
  claimTransactionId: string | null;
  claimedAt: number | null;
  cancelNo: string | null;
  cancelDate: string | null;
  cancelTransactionId: string | null;
  createdAt: number;
  updatedAt: number;
}

export type NewReward = Omit<RewardRecord, 'status' | 'userAddress' | 'claimTransactionId' | 'claimedAt' | 'cancelNo' | 'cancelDate' | 'cancelTransactionId'>;

/** What a status change may set besides the status. */
export type RewardChanges = Partial<Pick<RewardRecord, 'userAddress' | 'claimTransactionId' | 'claimedAt' | 'cancelNo' | 'cancelDate' | 'cancelTransactionId'>>;

/** Rewards. (tid, reward_reason) is unique; status changes are compare-and-set. */
export interface RewardRepository {
  /** Inserts the reward, or answers the one this tid already issued for this reason. `event` (a store webhook) only with a new reward, in its transaction. */
  insertReward(reward: NewReward, event?: NewWebhookEvent): Promise<{ inserted: boolean; reward: RewardRecord }>;
  findReward(id: string): Promise<RewardRecord | undefined>;
  /** Moves the reward from `from` to `to` with `changes`; false when its status was not `from`. `event` only with a move, in its transaction. */
  transition(id: string, from: RewardStatus, to: RewardStatus, changes: RewardChanges, now: number, event?: NewWebhookEvent): Promise<boolean>;
  /** Rewards mid-claim or mid-cancellation that nothing has touched since `before` (their run was interrupted). */
  listStale(before: number): Promise<RewardRecord[]>;
}

const toRecord = (row: Selectable<RewardsTable>): RewardRecord => ({
  id: row.id, tid: row.tid, rewardReason: row.reward_reason, network: row.network, settlementAddress: row.settlement_address,
  contractAddress: row.contract_address, tokenSymbol: row.token_symbol, tokenAmount: row.token_amount, exchangeAmount: row.exchange_amount,
  exchangeCurrency: row.exchange_currency, exchangeRate: row.exchange_rate, exchangeDateIndex: row.exchange_date_index, rewardDate: row.reward_date,
  expiresAt: Number(row.expires_at), status: row.status, userAddress: row.user_address, claimTransactionId: row.claim_transaction_id,
  claimedAt: row.claimed_at === null ? null : Number(row.claimed_at), cancelNo: row.cancel_no, cancelDate: row.cancel_date,
  cancelTransactionId: row.cancel_transaction_id, createdAt: Number(row.created_at), updatedAt: Number(row.updated_at),
});

// Stryker disable ConditionalExpression: `!== undefined` always true is equivalent (Kysely leaves a column set to undefined out of the update)
const changedColumns = (changes: RewardChanges): Partial<RewardsTable> => ({
  ...(changes.userAddress !== undefined && { user_address: changes.userAddress }),
  ...(changes.claimTransactionId !== undefined && { claim_transaction_id: changes.claimTransactionId }),
  ...(changes.claimedAt !== undefined && { claimed_at: changes.claimedAt }),
  ...(changes.cancelNo !== undefined && { cancel_no: changes.cancelNo }),
  ...(changes.cancelDate !== undefined && { cancel_date: changes.cancelDate }),
  ...(changes.cancelTransactionId !== undefined && { cancel_transaction_id: changes.cancelTransactionId }),
});
// Stryker restore ConditionalExpression

export function createRewardRepository(db: Db): RewardRepository {
  const findByReason = async (tid: string, reason: string) => {
    const row = await db.selectFrom('rewards').selectAll().where('tid', '=', tid).where('reward_reason', '=', reason).executeTakeFirst();
    return row && toRecord(row);
  };
  return {
    async insertReward(reward, event) {
      const inserted = await withWebhookEvent(db, event, reward.createdAt, async (trx) => Number((await trx.insertInto('rewards').values({
        id: reward.id, tid: reward.tid, reward_reason: reward.rewardReason, network: reward.network, settlement_address: reward.settlementAddress,
        contract_address: reward.contractAddress, token_symbol: reward.tokenSymbol, token_amount: reward.tokenAmount,
        exchange_amount: reward.exchangeAmount, exchange_currency: reward.exchangeCurrency, exchange_rate: reward.exchangeRate,
        exchange_date_index: reward.exchangeDateIndex, reward_date: reward.rewardDate, expires_at: reward.expiresAt,
        created_at: reward.createdAt, updated_at: reward.updatedAt,
        status: 'issued', user_address: null, claim_transaction_id: null, claimed_at: null, cancel_no: null, cancel_date: null, cancel_transaction_id: null,
      }).onConflict((oc) => oc.columns(['tid', 'reward_reason']).doNothing()).executeTakeFirst()).numInsertedOrUpdatedRows ?? 0n) === 1);
      const stored = await findByReason(reward.tid, reward.rewardReason);
      // Stryker disable next-line StringLiteral: unreachable (no reward row is ever deleted: the inserted or the conflicting one is there)
      if (!stored) throw new Error('reward vanished after insert');
      return { inserted, reward: stored };
    },
    async findReward(id) {
      const row = await db.selectFrom('rewards').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async transition(id, from, to, changes, now, event) {
      return withWebhookEvent(db, event, now, async (trx) => Number((await trx.updateTable('rewards').set({ ...changedColumns(changes), status: to, updated_at: now })
        .where('id', '=', id).where('status', '=', from).executeTakeFirst()).numUpdatedRows) === 1);
    },
    async listStale(before) {
      const rows = await db.selectFrom('rewards').selectAll()
        .where('status', 'in', ['claiming', 'canceling']).where('updated_at', '<', before).orderBy('updated_at').limit(100).execute();
      return rows.map(toRecord);
    },
  };
}
