import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify, type JWTHeaderParameters, type FlattenedJWSInput } from 'jose';
import { DomainError } from '#shared/errors.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import { accessTokenAlgorithm, type PublicSigningJwk, type SigningKeySet } from './signing-keys.ts';
import type { SigningKeySource } from './signing-key-store.ts';

/** `iss` and `aud` of every access token. */
export const accessTokenIssuer = 'vixpay';
export const accessTokenAudience = 'vixpay';
export const defaultAccessTokenTtlSeconds = 3600;

export interface JwtServiceDeps {
  /** A fixed key set, or the fleet's keys in the database (signing-key-store.ts), reloaded as they rotate. */
  keys: SigningKeySet | Pick<SigningKeySource, 'current' | 'refresh'>;
  clock?: Clock;
  /** Lifetime of an access token; default 1 hour. */
  ttlSeconds?: number;
  /** Allowed clock difference between instances when checking `exp`/`iat`; default 5 s. */
  clockToleranceSeconds?: number;
}

export interface AccessTokenClaims {
  userId: string;
  tokenId: string;
  /** Epoch seconds, as in the JWT. */
  issuedAt: number;
  expiresAt: number;
  /** When the user last proved a password or a VP (OIDC `auth_time`); carried over by refreshes. */
  authTime: number;
}

export interface IssuedAccessToken {
  token: string;
  claims: AccessTokenClaims;
}

export interface JwtService {
  /** Signs a token for `userId`; `authTime` (epoch s) defaults to now, i.e. a fresh login. */
  issueAccessToken(userId: string, options?: { authTime?: number }): Promise<IssuedAccessToken>;
  /**
   * Matches `AccessTokenVerifier` (src/transports/http/auth-hook.ts): a free function, safe to pass
   * around. Throws `request.unauthorized` for a token that is malformed, unsigned, signed with
   * another algorithm or key, altered, expired, or for another issuer or audience.
   */
  verifyAccessToken(token: string): Promise<{ userId: string }>;
  /** Like verifyAccessToken, with every claim we issue. */
  readAccessToken(token: string): Promise<AccessTokenClaims>;
  /** The public keys, for `GET /.well-known/jwks.json`. */
  jwks(): { keys: PublicSigningJwk[] };
  /** Reloads the keys from their store unless that was done within the last second (a rotation shows at once). */
  reloadKeys(): Promise<void>;
}

export function createJwtService(deps: JwtServiceDeps): JwtService {
  const source = 'current' in deps.keys ? deps.keys : fixedKeys(deps.keys);
  const clock = deps.clock ?? systemClock;
  const ttlSeconds = deps.ttlSeconds ?? defaultAccessTokenTtlSeconds;
  const clockTolerance = deps.clockToleranceSeconds ?? 5;
  if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) throw new Error('JWT lifetime must be a positive whole number of seconds');

  // Only our own keys, looked up by kid; a token naming another key (or none) is refused before any
  // signature check. A kid not known yet may be a key another instance just started signing with
  // (a rotation): the keys are reloaded (one load at a time, shared by the tokens waiting) before
  // it is refused. jwtVerify additionally allow-lists the algorithm.
  const keyFor = async (header: JWTHeaderParameters, _token: FlattenedJWSInput) => {
    const kid = header.kid;
    let key = kid === undefined ? undefined : source.current().byKid.get(kid);
    if (!key && kid !== undefined && /^[A-Za-z0-9_-]{43}$/.test(kid)) {
      await source.refresh().catch(() => undefined);
      key = source.current().byKid.get(kid);
    }
    if (!key) throw new DomainError('request.unauthorized', 'Invalid access token', { details: 'unknown signing key' });
    return key.publicKey;
  };

  const readAccessToken = async (token: string): Promise<AccessTokenClaims> => {
    try {
      const { payload } = await jwtVerify(token, keyFor, {
        algorithms: [accessTokenAlgorithm],
        typ: 'JWT',
        issuer: accessTokenIssuer,
        audience: accessTokenAudience,
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
        currentDate: new Date(clock()),
        clockTolerance,
      });
      const { sub, jti, iat, exp } = payload;
      if (!sub || !jti || iat === undefined || exp === undefined) throw new Error('incomplete claims');
      const authTime = typeof payload.auth_time === 'number' ? payload.auth_time : iat;
      return { userId: sub, tokenId: jti, issuedAt: iat, expiresAt: exp, authTime };
    } catch (error) {
      if (error instanceof DomainError) throw error;
      const expired = error instanceof joseErrors.JWTExpired;
      throw new DomainError('request.unauthorized', expired ? 'Access token expired' : 'Invalid access token', { cause: error });
    }
  };

  return {
    async issueAccessToken(userId, options = {}) {
      const issuedAt = Math.floor(clock() / 1000);
      const claims: AccessTokenClaims = {
        userId,
        tokenId: randomUUID(),
        issuedAt,
        expiresAt: issuedAt + ttlSeconds,
        authTime: options.authTime ?? issuedAt,
      };
      const keys = source.current();
      const token = await new SignJWT({ auth_time: claims.authTime })
        .setProtectedHeader({ alg: accessTokenAlgorithm, typ: 'JWT', kid: keys.active.kid })
        .setIssuer(accessTokenIssuer)
        .setAudience(accessTokenAudience)
        .setSubject(userId)
        .setIssuedAt(claims.issuedAt)
        .setExpirationTime(claims.expiresAt)
        .setJti(claims.tokenId)
        .sign(keys.active.privateKey);
      return { token, claims };
    },
    async verifyAccessToken(token) {
      const { userId } = await readAccessToken(token);
      return { userId };
    },
    readAccessToken,
    jwks: () => ({ keys: [...source.current().byKid.values()].map((key) => key.publicJwk) }),
    reloadKeys: () => source.refresh(),
  };
}

function fixedKeys(keys: SigningKeySet): Pick<SigningKeySource, 'current' | 'refresh'> {
  return { current: () => keys, refresh: async () => undefined };
}
