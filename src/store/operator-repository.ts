import type { Db } from './db.ts';

/** Console operators and their login sessions (migration 0010). */
export interface OperatorRepository {
  /** False when the username is taken. */
  insertOperator(operator: { username: string; passwordHash: string }, now: number): Promise<boolean>;
  findPasswordHash(username: string): Promise<string | undefined>;
  insertSession(session: { tokenHash: string; username: string; expiresAt: number }, now: number): Promise<void>;
  /** The operator of an unexpired session. */
  findSessionUser(tokenHash: string, now: number): Promise<string | undefined>;
  deleteSession(tokenHash: string): Promise<void>;
  deleteExpiredSessions(now: number): Promise<void>;
}

export function createOperatorRepository(db: Db): OperatorRepository {
  return {
    async insertOperator(operator, now) {
      const result = await db.insertInto('operators').values({ username: operator.username, password_hash: operator.passwordHash, created_at: now })
        .onConflict((oc) => oc.column('username').doNothing()).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async findPasswordHash(username) {
      return (await db.selectFrom('operators').select('password_hash').where('username', '=', username).executeTakeFirst())?.password_hash;
    },
    async insertSession(session, now) {
      await db.insertInto('operator_sessions').values({
        token_hash: session.tokenHash, username: session.username, expires_at: session.expiresAt, created_at: now,
      }).execute();
    },
    async findSessionUser(tokenHash, now) {
      return (await db.selectFrom('operator_sessions').select('username')
        .where('token_hash', '=', tokenHash).where('expires_at', '>', now).executeTakeFirst())?.username;
    },
    async deleteSession(tokenHash) {
      await db.deleteFrom('operator_sessions').where('token_hash', '=', tokenHash).execute();
    },
    async deleteExpiredSessions(now) {
      await db.deleteFrom('operator_sessions').where('expires_at', '<=', now).execute();
    },
  };
}
