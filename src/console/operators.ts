import { randomBytes } from 'node:crypto';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import type { Clock } from '#shared/clock.ts';
import type { PasswordHasher } from '../identity/password-hasher.ts';
import type { LoginRateLimiter } from '../identity/login-rate-limiter.ts';
import type { OperatorRepository } from '../store/operator-repository.ts';

export interface OperatorDeps {
  operators: OperatorRepository;
  passwords: PasswordHasher;
  /** The console's failed-password throttle (its operators' own, apart from the app users'), keyed `operator:<username>` and by address. */
  rateLimiter: LoginRateLimiter;
  clock: Clock;
  /** How long a console login lasts. */
  sessionTtlMs: number;
}

export const operatorRules = {
  username: /^[A-Za-z0-9._@-]{1,64}$/,
  minPasswordLength: 12,
  maxPasswordLength: 256,
} as const;

/** A console login: the cookie's token (random, shown once) and when it ends. */
export interface OperatorSession {
  token: string;
  username: string;
  expiresAt: number;
}

/** `vixpay operator add`: an operator of the console (argon2id hash of the password). */
export async function addOperator(deps: Pick<OperatorDeps, 'operators' | 'passwords' | 'clock'>, params: { username: string; password: string }): Promise<{ username: string }> {
  if (!operatorRules.username.test(params.username)) {
    throw new DomainError('request.invalid', 'username: 1 to 64 letters, digits or . _ @ -', { details: 'username' });
  }
  if (params.password.length < operatorRules.minPasswordLength || params.password.length > operatorRules.maxPasswordLength) {
    throw new DomainError('request.invalid', `password: ${operatorRules.minPasswordLength} to ${operatorRules.maxPasswordLength} characters`, { details: 'password' });
  }
  const passwordHash = await deps.passwords.hash(params.password);
  if (!(await deps.operators.insertOperator({ username: params.username, passwordHash }, deps.clock()))) {
    throw new DomainError('auth.user_exists', `operator ${params.username} exists`);
  }
  return { username: params.username };
}

/** Checks an operator's password (throttled like every password check) and opens a session. */
export async function loginOperator(deps: OperatorDeps, params: { username: string; password: string; ip: string }): Promise<OperatorSession> {
  const attempt = await deps.rateLimiter.beginAttempt(`operator:${params.username}`, params.ip);
  const stored = await deps.operators.findPasswordHash(params.username);
  if (!(await deps.passwords.verify(stored, params.password)) || stored === undefined) {
    throw new DomainError('request.unauthorized', 'wrong username or password');
  }
  await attempt.succeeded();
  const now = deps.clock();
  await deps.operators.deleteExpiredSessions(now);
  const token = randomBytes(32).toString('base64url');
  const expiresAt = now + deps.sessionTtlMs;
  await deps.operators.insertSession({ tokenHash: sha256Hex(token), username: params.username, expiresAt }, now);
  return { token, username: params.username, expiresAt };
}

/** The operator of a session token, or undefined (unknown, expired or logged out). */
export function operatorOfSession(deps: Pick<OperatorDeps, 'operators' | 'clock'>, token: string): Promise<string | undefined> {
  return deps.operators.findSessionUser(sha256Hex(token), deps.clock());
}

export async function logoutOperator(deps: Pick<OperatorDeps, 'operators'>, token: string): Promise<void> {
  await deps.operators.deleteSession(sha256Hex(token));
}
