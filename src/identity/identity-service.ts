import path from 'node:path';
import type { Db } from '../store/db.ts';
import type { Clock } from '../shared/clock.ts';
import { createPasswordHasher } from './password-hasher.ts';
import { createUserRepository } from './user-repository.ts';
import { createUserService, type UserService } from './users.ts';
import { loadOrCreateSigningKeys, signingKeyFileName } from './signing-keys.ts';
import { createJwtService, type JwtService } from './jwt.ts';
import { createLoginRateLimiter, type LoginRateLimiter } from './login-rate-limiter.ts';
import { createLoginService, type LoginService } from './login.ts';
import { createWebsiteLoginRepository } from './website-login-repository.ts';
import { createWebsiteLoginService, type WebsiteLoginService } from './website-login.ts';

export interface Identity {
  users: UserService;
  jwt: JwtService;
  login: LoginService;
  websiteLogins: WebsiteLoginService;
  /** Failed-password throttle shared by every password check (login, REST pay). */
  rateLimiter: LoginRateLimiter;
}

/** Users, JWTs (key in `dataDir`), password and website login, over the store. */
export async function createIdentity(deps: { db: Db; clock: Clock; dataDir: string; jwtTtlSeconds: number }): Promise<Identity> {
  const { db, clock } = deps;
  const users = createUserService({ users: createUserRepository(db), passwords: createPasswordHasher(), clock });
  const keys = await loadOrCreateSigningKeys(path.join(deps.dataDir, signingKeyFileName));
  const jwt = createJwtService({ keys, clock, ttlSeconds: deps.jwtTtlSeconds });
  const rateLimiter = createLoginRateLimiter({ clock });
  const login = createLoginService({ users, jwt, rateLimiter, clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(db), clock });
  return { users, jwt, login, websiteLogins, rateLimiter };
}
