import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError, isDomainError } from '#shared/errors.ts';
import type { LoginService } from '../../../identity/login.ts';
import { LoginRateLimitedError } from '../../../identity/login-rate-limiter.ts';
import { neverRequestedMessage, waitForAppMessage, type WebsiteLoginService } from '../../../identity/website-login.ts';
import { userLimits } from '../../../identity/users.ts';
import { errorBody } from '../errors.ts';
import { zodRoute } from '../route-schema.ts';

export interface AuthRoutesDeps {
  login: Pick<LoginService, 'authUser' | 'issueForUser'>;
  websiteLogins: Pick<WebsiteLoginService, 'start' | 'takeResult' | 'cancel'>;
}

/** Login bodies are small; anything larger is refused by Fastify with 413 before parsing. */
const bodyLimit = 16 * 1024;

/** An empty string or null counts as absent: apps send `"token": ""` on a first login. */
const optionalSecret = (max: number) => z.string().max(max).nullish().transform((value) => value || undefined);

const authUserBody = z.object({
  id: z.string().min(1).max(userLimits.idMaxLength),
  password: optionalSecret(userLimits.passwordMaxLength),
  token: optionalSecret(8192),
  userType: z.unknown().optional(), // docs/interfaces.md#authentication-api: ignored
});

const waitTime = z.union([z.number(), z.string().regex(/^\d{1,6}$/).transform(Number)]).nullish();

const startBody = z.object({ requestId: z.string().min(1).max(2048), waitTime });
// waitTime is ignored by result and cancel (docs/interfaces.md#authentication-api) whatever its type.
const requestBody = z.object({ requestId: z.string().min(1).max(2048), waitTime: z.unknown().optional() });

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`);
  throw new DomainError('request.invalid', problems.join('; '), { details: problems.join('; ') });
}

/**
 * The login endpoints of the authentication API (docs/interfaces.md#authentication-api). Register under
 * `/v2/auth`: `await app.register(authRoutes, { prefix: '/v2/auth', login, websiteLogins })`.
 */
export async function authRoutes(app: FastifyInstance, deps: AuthRoutesDeps): Promise<void> {
  const { login, websiteLogins } = deps;

  app.post('/auth-user', { bodyLimit, ...zodRoute({ body: authUserBody, tags: ['auth'], summary: 'Log in with a password or refresh a token' }) }, async (request, reply) => {
    const body = parse(authUserBody, request.body);
    try {
      return await login.authUser({ id: body.id, password: body.password, token: body.token, clientIp: request.ip });
    } catch (error) {
      if (error instanceof LoginRateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
      throw error;
    }
  });

  app.post('/auth-user-by-app', { bodyLimit, ...zodRoute({ body: startBody, tags: ['auth'], summary: 'Start a website login through the app' }) }, async (request) => {
    const body = parse(startBody, request.body);
    const started = await websiteLogins.start({ site: body.requestId, waitTime: body.waitTime ?? undefined, requesterIp: request.ip });
    return { requestId: started.requestId, waitTime: started.waitTime };
  });

  // docs/interfaces.md#authentication-api fixes this endpoint's two errors, codes "400" and "401" included; they are mapped
  // here rather than by the shared table so that every other endpoint keeps our stable codes.
  // A body that names no request (no requestId, or not one we could have issued) is docs/interfaces.md#authentication-api's
  // "no such request": its 400, not our request.invalid.
  app.post('/auth-user-result-by-app', { bodyLimit, ...zodRoute({ body: requestBody, tags: ['auth'], summary: 'The result of a website login (the user\'s token once the app approved it)' }) }, async (request, reply) => {
    const body = requestBody.safeParse(request.body ?? {});
    if (!body.success) return reply.status(400).send(errorBody('400', neverRequestedMessage));
    try {
      const { userId } = await websiteLogins.takeResult(body.data.requestId, { requesterIp: request.ip });
      return await login.issueForUser(userId);
    } catch (error) {
      if (isDomainError(error) && error.code === 'auth.login_request_unknown') {
        return reply.status(400).send(errorBody('400', neverRequestedMessage));
      }
      if (isDomainError(error) && error.code === 'auth.login_request_pending') {
        return reply.status(401).send(errorBody('401', waitForAppMessage));
      }
      throw error;
    }
  });

  app.post('/cancel-auth-user-by-app', { bodyLimit, ...zodRoute({ body: requestBody, tags: ['auth'], summary: 'Cancel a website login' }) }, async (request, reply) => {
    const body = parse(requestBody, request.body);
    await websiteLogins.cancel(body.requestId, { requesterIp: request.ip });
    return reply.status(200).send();
  });
}
