import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { JwtService } from './jwt.ts';
import type { LoginRateLimiter } from './login-rate-limiter.ts';
import type { User, UserService } from './users.ts';

/** docs/interfaces.md#authenticated-user-record: the response of every login endpoint, exactly these keys. */
export interface AuthenticatedUserRecord {
  token: string;
  userId: string;
  name: string;
  telNo: string | null;
  email: string | null;
}

export interface AuthUserParameters {
  id: string;
  /** Proves the user; when present it alone decides (a token beside it is ignored). */
  password?: string | undefined;
  /** An unexpired access token of this same user, accepted in place of the password. */
  token?: string | undefined;
  /** For the failed-attempt limit per client. */
  clientIp: string;
}

export interface LoginServiceDeps {
  users: Pick<UserService, 'verifyPassword' | 'findUser'>;
  jwt: Pick<JwtService, 'issueAccessToken' | 'readAccessToken'>;
  rateLimiter: LoginRateLimiter;
  clock?: Clock;
  /**
   * How long after the last password (or VP) login a token may still be refreshed with a token alone;
   * default 7 days. Stops a stolen token from being extended for ever.
   */
  maxSessionSeconds?: number;
}

export interface LoginService {
  /**
   * `POST /v2/auth/auth-user`: a fresh token for a correct password, or for a valid token of the same
   * user (docs/interfaces.md#authentication-api: "sending an existing token extends its validity period").
   */
  authUser(params: AuthUserParameters): Promise<AuthenticatedUserRecord>;
  /**
   * The record with a fresh token for a user already proven by other means (a VP, a completed website
   * login). Throws `request.unauthorized` when the user no longer exists.
   */
  issueForUser(userId: string): Promise<AuthenticatedUserRecord>;
}

export const defaultMaxSessionSeconds = 7 * 24 * 3600;

function toRecord(user: User, token: string): AuthenticatedUserRecord {
  return { token, userId: user.id, name: user.name, telNo: user.telNo, email: user.email };
}

export function createLoginService(deps: LoginServiceDeps): LoginService {
  const { users, jwt, rateLimiter } = deps;
  const clock = deps.clock ?? systemClock;
  const maxSessionSeconds = deps.maxSessionSeconds ?? defaultMaxSessionSeconds;

  const withPassword = async (id: string, password: string, clientIp: string) => {
    const attempt = await rateLimiter.beginAttempt(id, clientIp);
    const user = await users.verifyPassword(id, password);
    await attempt.succeeded();
    const { token } = await jwt.issueAccessToken(user.id);
    return toRecord(user, token);
  };

  // A signature cannot be guessed, so token refreshes are not counted by the rate limiter.
  const withToken = async (id: string, presented: string) => {
    const claims = await jwt.readAccessToken(presented);
    if (claims.userId !== id) throw new DomainError('request.unauthorized', 'Invalid access token', { details: 'token of another user' });
    if (Math.floor(clock() / 1000) - claims.authTime > maxSessionSeconds) {
      throw new DomainError('request.unauthorized', 'Session too old; log in with the password');
    }
    const user = await users.findUser(id);
    if (!user) throw new DomainError('request.unauthorized', 'Invalid access token', { details: 'user gone' });
    const { token } = await jwt.issueAccessToken(user.id, { authTime: claims.authTime });
    return toRecord(user, token);
  };

  return {
    async authUser({ id, password, token, clientIp }) {
      if (password !== undefined) return withPassword(id, password, clientIp);
      if (token !== undefined) return withToken(id, token);
      throw new DomainError('request.invalid', 'password or token required', { details: 'password' });
    },
    async issueForUser(userId) {
      const user = await users.findUser(userId);
      if (!user) throw new DomainError('request.unauthorized', 'User no longer exists');
      const { token } = await jwt.issueAccessToken(user.id);
      return toRecord(user, token);
    },
  };
}
