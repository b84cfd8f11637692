import Fastify, { type FastifyInstance } from 'fastify';
import { createJwtService, type JwtService } from '../../src/identity/jwt.ts';
import { createLoginRateLimiter } from '../../src/identity/login-rate-limiter.ts';
import { createLoginService } from '../../src/identity/login.ts';
import { createPasswordHasher } from '../../src/identity/password-hasher.ts';
import { generateSigningKeySet } from '../../src/identity/signing-keys.ts';
import { createUserRepository } from '../../src/store/user-repository.ts';
import { createUserService, type UserService } from '../../src/identity/users.ts';
import { createWebsiteLoginRepository } from '../../src/store/website-login-repository.ts';
import { createWebsiteLoginService, type WebsiteLoginService } from '../../src/identity/website-login.ts';
import { storeFactories } from './store-factories.ts';
import { installHttpErrorHandler } from '../../src/transports/http/errors.ts';
import { jwksRoutes } from '../../src/transports/http/routes/auth-jwks.ts';
import { authRoutes } from '../../src/transports/http/routes/auth.ts';

/** Test support: the auth routes wired as main.ts wires them, on a throw-away SQLite store. */
export interface AuthTestApp {
  app: FastifyInstance;
  users: UserService;
  jwt: JwtService;
  websiteLogins: WebsiteLoginService;
  /** Moves the shared clock. */
  advance(ms: number): void;
  close(): Promise<void>;
}

export async function buildAuthTestApp(start = Date.UTC(2025, 0, 1)): Promise<AuthTestApp> {
  let now = start;
  const clock = () => now;
  const sqlite = storeFactories.find((factory) => factory.name === 'sqlite');
  if (!sqlite) throw new Error('no sqlite store factory');
  const opened = await sqlite.open();
  const users = createUserService({ users: createUserRepository(opened.store.db), passwords: createPasswordHasher(), clock });
  const jwt = createJwtService({ keys: await generateSigningKeySet(), clock });
  const login = createLoginService({ users, jwt, rateLimiter: createLoginRateLimiter({ clock }), clock });
  const websiteLogins = createWebsiteLoginService({ repository: createWebsiteLoginRepository(opened.store.db), clock });

  const app = Fastify();
  installHttpErrorHandler(app);
  await app.register(authRoutes, { prefix: '/v2/auth', login, websiteLogins });
  await app.register(jwksRoutes, { jwt });
  await app.ready();
  return {
    app, users, jwt, websiteLogins,
    advance: (ms) => { now += ms; },
    close: async () => { await app.close(); await opened.dispose(); },
  };
}
