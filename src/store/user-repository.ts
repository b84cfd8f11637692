import type { Kysely } from 'kysely';
import type { Database, UsersTable } from './schema.ts';

/** A user row as the domain sees it, password hash included (never leaves src/identity). */
export interface UserRecord {
  id: string;
  passwordHash: string;
  name: string;
  telNo: string | null;
  email: string | null;
  walletAddress: string | null;
  did: string | null;
  createdAt: number;
}

/** The `users` table, on SQLite and PostgreSQL alike. */
export interface UserRepository {
  /** False when the id is taken. */
  insert(user: UserRecord): Promise<boolean>;
  findById(id: string): Promise<UserRecord | undefined>;
  findByDid(did: string): Promise<UserRecord | undefined>;
  setPasswordHash(id: string, passwordHash: string): Promise<void>;
  setWalletAddress(id: string, walletAddress: string): Promise<boolean>;
  /** False when the user does not exist; throws the store's unique violation when another user holds the DID. */
  setDid(id: string, did: string): Promise<boolean>;
}

function toRecord(row: UsersTable): UserRecord {
  return {
    id: row.id, passwordHash: row.password_hash, name: row.name, telNo: row.tel_no, email: row.email,
    walletAddress: row.wallet_address, did: row.did, createdAt: Number(row.created_at),
  };
}

export function createUserRepository(db: Kysely<Database>): UserRepository {
  return {
    async insert(user) {
      const result = await db.insertInto('users').values({
        id: user.id, password_hash: user.passwordHash, name: user.name, tel_no: user.telNo, email: user.email,
        wallet_address: user.walletAddress, did: user.did, created_at: user.createdAt,
      }).onConflict((oc) => oc.column('id').doNothing()).executeTakeFirst();
      return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
    },
    async findById(id) {
      const row = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async findByDid(did) {
      const row = await db.selectFrom('users').selectAll().where('did', '=', did).executeTakeFirst();
      return row && toRecord(row);
    },
    async setPasswordHash(id, passwordHash) {
      await db.updateTable('users').set({ password_hash: passwordHash }).where('id', '=', id).execute();
    },
    async setWalletAddress(id, walletAddress) {
      const result = await db.updateTable('users').set({ wallet_address: walletAddress }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
    async setDid(id, did) {
      const result = await db.updateTable('users').set({ did }).where('id', '=', id).executeTakeFirst();
      return Number(result.numUpdatedRows) === 1;
    },
  };
}
