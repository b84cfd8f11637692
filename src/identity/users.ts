import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { PasswordHasher } from './password-hasher.ts';
import type { UserRecord, UserRepository } from '../store/user-repository.ts';

/** A user without secrets: what services and transports may see. */
export interface User {
  id: string;
  name: string;
  telNo: string | null;
  /** May be an empty string (docs/interfaces.md#authenticated-user-record). */
  email: string | null;
  walletAddress: string | null;
  did: string | null;
  createdAt: number;
}

export interface NewUser {
  id: string;
  password: string;
  name: string;
  email?: string | undefined;
  tel?: string | undefined;
  walletAddress?: string | undefined;
}

export interface UserServiceDeps {
  users: UserRepository;
  passwords: PasswordHasher;
  clock?: Clock;
}

export interface UserService {
  /** Throws `request.invalid` on a bad field, `auth.user_exists` when the id is taken. */
  createUser(input: NewUser): Promise<User>;
  findUser(id: string): Promise<User | undefined>;
  findUserByDid(did: string): Promise<User | undefined>;
  /**
   * The user whose id and password these are; otherwise `request.unauthorized` with one message for
   * an unknown id and a wrong password alike (and the same argon2 work, see PasswordHasher.verify).
   */
  verifyPassword(id: string, password: string): Promise<User>;
}

/** Same words for "no such user" and "wrong password": the answer must not tell which ids exist. */
export const invalidCredentialsMessage = 'Invalid id or password';

export const userLimits = {
  idMaxLength: 128,
  passwordMinLength: 8,
  passwordMaxLength: 1024,
  nameMaxLength: 256,
  emailMaxLength: 320,
  telMaxLength: 32,
} as const;

// Ids are case-sensitive and printable: no whitespace, no control or format characters.
const idPattern = /^[^\s\p{C}]+$/u;
const telPattern = /^[0-9+\-() ]*$/;

/**
 * Checks a new user's fields and returns them trimmed where that is safe (name, email, tel; never
 * the password). Exported so `addUser` can refuse bad input before it creates a wallet account.
 */
export function validateNewUser(input: NewUser): NewUser {
  const problem = (field: string, why: string) => new DomainError('request.invalid', `${field}: ${why}`, { details: field });
  const { id, password } = input;
  if (typeof id !== 'string' || id.length === 0 || id.length > userLimits.idMaxLength || !idPattern.test(id)) {
    throw problem('id', `1 to ${userLimits.idMaxLength} printable characters without spaces`);
  }
  if (typeof password !== 'string' || [...password].length < userLimits.passwordMinLength || password.length > userLimits.passwordMaxLength) {
    throw problem('password', `${userLimits.passwordMinLength} to ${userLimits.passwordMaxLength} characters`);
  }
  const name = typeof input.name === 'string' ? input.name.trim() : '';
  if (name.length === 0 || name.length > userLimits.nameMaxLength) throw problem('name', `1 to ${userLimits.nameMaxLength} characters`);
  const email = input.email?.trim();
  if (email !== undefined && (email.length > userLimits.emailMaxLength || (email !== '' && !/^[^\s@]+@[^\s@]+$/.test(email)))) {
    throw problem('email', 'not an e-mail address');
  }
  const tel = input.tel?.trim();
  if (tel !== undefined && (tel.length > userLimits.telMaxLength || !telPattern.test(tel))) {
    throw problem('tel', `up to ${userLimits.telMaxLength} digits, spaces, +, -, ( and )`);
  }
  return { id, password, name, email, tel: tel === '' ? undefined : tel, walletAddress: input.walletAddress };
}

function withoutSecrets(record: UserRecord): User {
  return {
    id: record.id, name: record.name, telNo: record.telNo, email: record.email,
    walletAddress: record.walletAddress, did: record.did, createdAt: record.createdAt,
  };
}

export function createUserService(deps: UserServiceDeps): UserService {
  const { users, passwords } = deps;
  const clock = deps.clock ?? systemClock;

  return {
    async createUser(input) {
      const valid = validateNewUser(input);
      if (await users.findById(valid.id)) throw new DomainError('auth.user_exists', `user ${valid.id} already exists`);
      const record: UserRecord = {
        id: valid.id,
        passwordHash: await passwords.hash(valid.password),
        name: valid.name,
        telNo: valid.tel ?? null,
        email: valid.email ?? null,
        walletAddress: valid.walletAddress ?? null,
        did: null,
        createdAt: clock(),
      };
      // The insert is the real check; findById above only spares a hash for the common mistake.
      if (!(await users.insert(record))) throw new DomainError('auth.user_exists', `user ${valid.id} already exists`);
      return withoutSecrets(record);
    },
    async findUser(id) {
      const record = await users.findById(id);
      return record && withoutSecrets(record);
    },
    async findUserByDid(did) {
      const record = await users.findByDid(did);
      return record && withoutSecrets(record);
    },
    async verifyPassword(id, password) {
      const record = await users.findById(id);
      const ok = await passwords.verify(record?.passwordHash, password);
      if (!record || !ok) throw new DomainError('request.unauthorized', invalidCredentialsMessage);
      if (passwords.needsRehash(record.passwordHash)) {
        // Parameters were raised since this hash was made: upgrade it while the password is at hand.
        await users.setPasswordHash(record.id, await passwords.hash(password));
      }
      return withoutSecrets(record);
    },
  };
}
