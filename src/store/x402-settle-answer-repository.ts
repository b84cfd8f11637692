import type { Db } from './db.ts';

/** Which x402 settlements a settle has answered settled (migration 0024). */
export interface X402SettleAnswerRepository {
  /** Records the first success answer of the settlement with this id; later ones change nothing. */
  markAnswered(settlementId: string, keyId: string, now: number): Promise<void>;
  /** Whether a settle answered this settlement settled. */
  answered(settlementId: string): Promise<boolean>;
}

export function createX402SettleAnswerRepository(db: Db): X402SettleAnswerRepository {
  return {
    async markAnswered(settlementId, keyId, now) {
      await db.insertInto('x402_settle_answers').values({ settlement_id: settlementId, key_id: keyId, answered_at: now })
        .onConflict((oc) => oc.column('settlement_id').doNothing()).execute();
    },
    async answered(settlementId) {
      return (await db.selectFrom('x402_settle_answers').select('settlement_id').where('settlement_id', '=', settlementId).executeTakeFirst()) !== undefined;
    },
  };
}
