import type { Db } from './db.ts';
import type { RewardsTable, RewardStatus } from './schema.ts';

export type RewardRecord = RewardsTable;

export type NewReward = Omit<RewardsTable, 'status' | 'user_address' | 'claim_transaction_id' | 'claimed_at' | 'cancel_no' | 'cancel_date' | 'cancel_transaction_id'>;

/** Rewards. (tid, reward_reason) is unique; status changes are compare-and-set. */
export interface RewardRepository {
  /** Inserts the reward, or answers the one this tid already issued for this reason. */
  insertReward(reward: NewReward): Promise<{ inserted: boolean; reward: RewardRecord }>;
  findReward(id: string): Promise<RewardRecord | undefined>;
  /** Moves the reward from `from` to `to` with `changes`; false when its status was not `from`. */
  transition(id: string, from: RewardStatus, to: RewardStatus, changes: Partial<RewardRecord>, now: number): Promise<boolean>;
}

const plain = (row: RewardRecord): RewardRecord => ({ ...row, expires_at: Number(row.expires_at), created_at: Number(row.created_at), updated_at: Number(row.updated_at) });

export function createRewardRepository(db: Db): RewardRepository {
  const findByReason = async (tid: string, reason: string) => {
    const row = await db.selectFrom('rewards').selectAll().where('tid', '=', tid).where('reward_reason', '=', reason).executeTakeFirst();
    return row && plain(row);
  };
  return {
    async insertReward(reward) {
      const result = await db.insertInto('rewards').values({
        ...reward, status: 'issued', user_address: null, claim_transaction_id: null, claimed_at: null,
        cancel_no: null, cancel_date: null, cancel_transaction_id: null,
      }).onConflict((oc) => oc.columns(['tid', 'reward_reason']).doNothing()).executeTakeFirst();
      const inserted = Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
      const stored = await findByReason(reward.tid, reward.reward_reason);
      if (!stored) throw new Error('reward vanished after insert');
      return { inserted, reward: stored };
    },
    async findReward(id) {
      const row = await db.selectFrom('rewards').selectAll().where('id', '=', id).executeTakeFirst();
      return row && plain(row);
    },
    async transition(id, from, to, changes, now) {
      const result = await db.updateTable('rewards').set({ ...changes, status: to, updated_at: now })
        .where('id', '=', id).where('status', '=', from).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
