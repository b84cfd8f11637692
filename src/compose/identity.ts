/**
 * Users, logins and JWTs. The signing keys are the fleet's, in the database (created by the first
 * instance, or imported once from `DATA_DIR/jwt-signing-key.json`); the failed-login throttle is in
 * Redis when the instances share one (REDIS_URL), so failures on every instance add up.
 */
import path from 'node:path';
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Store } from '../store/db.ts';
import { createPasswordHasher } from '../identity/password-hasher.ts';
import { createUserRepository } from '../store/user-repository.ts';
import { createUserService, type UserService } from '../identity/users.ts';
import { signingKeyFileName } from '../identity/signing-keys.ts';
import { openSigningKeys } from '../identity/signing-key-store.ts';
import { createSigningKeyRepository } from '../store/signing-key-repository.ts';
import { createRedisLoginRateLimiter } from '../identity/redis-login-rate-limiter.ts';
import { createJwtService, type JwtService } from '../identity/jwt.ts';
import { createLoginRateLimiter, type LoginRateLimiter } from '../identity/login-rate-limiter.ts';
import { createLoginService, type LoginService } from '../identity/login.ts';
import { createWebsiteLoginRepository } from '../store/website-login-repository.ts';
import { createWebsiteLoginService, type WebsiteLoginService } from '../identity/website-login.ts';

export interface Identity {
  users: UserService;
  jwt: JwtService;
  login: LoginService;
  websiteLogins: WebsiteLoginService;
  /** Failed-password throttle of the app's users: every password check of theirs (login, REST pay). */
  rateLimiter: LoginRateLimiter;
  /** The console operators' own throttle: their failures never slow the app's users on the same address. */
  consoleRateLimiter: LoginRateLimiter;
}

export async function composeIdentity(
  config: Config, store: Store, vault: KeyVault, clock: Clock, logger: Logger, throttle: { redis: boolean; loginKeyPrefix: string },
): Promise<Identity & { close(): Promise<void> }> {
  const users = createUserService({ users: createUserRepository(store.db), passwords: createPasswordHasher(), clock });
  const keys = await openSigningKeys({
    repository: createSigningKeyRepository(store.db), vault, clock, ttlSeconds: config.jwtTtlSeconds,
    importFile: path.join(config.dataDir, signingKeyFileName),
  });
  const jwt = createJwtService({ keys, clock, ttlSeconds: config.jwtTtlSeconds });
  const limits = {
    clock, windowMs: config.loginWindowSeconds * 1000, maxFailuresPerId: config.loginMaxFailuresPerAccount, maxFailuresPerIp: config.loginMaxFailuresPerAddress,
  };
  const limiter = async (keyPrefix: string): Promise<LoginRateLimiter & { close?(): Promise<void> }> => (throttle.redis && config.redisUrl
    ? createRedisLoginRateLimiter({ url: config.redisUrl, logger: logger.child({ component: 'login-throttle' }), keyPrefix, ...limits })
    : createLoginRateLimiter(limits));
  const rateLimiter = await limiter(throttle.loginKeyPrefix);
  const consoleRateLimiter = await limiter(`${throttle.loginKeyPrefix}:console`);
  const login = createLoginService({ users, jwt, rateLimiter, clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(store.db), clock });
  return {
    users, jwt, login, websiteLogins, rateLimiter, consoleRateLimiter,
    close: async () => { keys.close(); await rateLimiter.close?.(); await consoleRateLimiter.close?.(); },
  };
}
