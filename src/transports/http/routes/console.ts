import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { z } from 'zod';
import { DomainError, isDomainError } from '#shared/errors.ts';
import { LoginRateLimitedError } from '../../../identity/login-rate-limiter.ts';
import { loginOperator, logoutOperator, operatorOfSession, type OperatorDeps } from '../../../console/operators.ts';
import { zodRoute } from '../route-schema.ts';
import { consoleApiRoutes, type ConsoleApiDeps } from './console-api.ts';
import { consoleStatementRoutes, type ConsoleStatementDeps } from './console-statements.ts';

export interface ConsoleRoutesDeps extends ConsoleApiDeps {
  operators: OperatorDeps;
  /** Statement downloads (docs/statements.md), when the platform has them. */
  statements?: ConsoleStatementDeps['statements'];
}

/** The console's session cookie: an opaque random token, never a user's JWT. */
export const consoleCookie = 'vixpay_console';

/**
 * Strict CSP: scripts, styles and the chart library only from our own origin (no inline code, no
 * CDN), fetches only to us, no framing, forms only to us.
 */
export const consoleContentSecurityPolicy = [
  "default-src 'none'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'",
  "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'",
].join('; ');

const assetDir = fileURLToPath(new URL('../console-assets/', import.meta.url));
const chartJsFile = path.join(path.dirname(fileURLToPath(import.meta.resolve('chart.js'))), 'chart.umd.min.js');

/** The page and the files it loads, read once. */
const assets: Record<string, { body: Buffer; type: string }> = {
  'console.js': { body: readFileSync(path.join(assetDir, 'console.js')), type: 'text/javascript; charset=utf-8' },
  'console.css': { body: readFileSync(path.join(assetDir, 'console.css')), type: 'text/css; charset=utf-8' },
  ...Object.fromEntries(['view.js', 'view-kit.js', 'view-statement.js', 'view-day.js', 'view-receipt.js'].map((file) =>
    [file, { body: readFileSync(path.join(assetDir, file)), type: 'text/javascript; charset=utf-8' }])),
  'chart.umd.min.js': { body: readFileSync(chartJsFile), type: 'text/javascript; charset=utf-8' },
};
const consolePage = readFileSync(path.join(assetDir, 'console.html'), 'utf8');
const loginPage = readFileSync(path.join(assetDir, 'login.html'), 'utf8');
const viewPage = readFileSync(path.join(assetDir, 'view.html'), 'utf8');

const loginForm = z.object({ username: z.string().max(64), password: z.string().max(256) });
const assetParams = z.object({ file: z.enum(Object.keys(assets) as [string, ...string[]]) });
const html = 'text/html; charset=utf-8';

/** The login page, with a line saying why when a login failed. */
function renderLogin(message?: string): string {
  return loginPage.replace('<!--message-->', message ? `<p class="error" role="alert">${message}</p>` : '');
}

/** A POST from a page of another origin (a browser sends Origin on every POST). */
function crossOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (!origin) return false;
  try {
    return new URL(origin).host !== request.headers.host;
  } catch {
    return true;
  }
}

/**
 * The operator console at `/console` (docs/console.md): a login page, the dashboard page, its own
 * script and style files and the chart library from our origin, and the JSON API under
 * `/console/api` the page draws from. Operators log in with `vixpay operator add`'s accounts; the
 * session is an HttpOnly SameSite=Strict cookie scoped to /console.
 */
export async function consoleRoutes(app: FastifyInstance, deps: ConsoleRoutesDeps): Promise<void> {
  await app.register(cookie);
  await app.register(formbody, { bodyLimit: 4096 });
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', consoleContentSecurityPolicy);
    reply.header('x-content-type-options', 'nosniff');
    // same-origin, not no-referrer: with no-referrer a browser sends `Origin: null` on the login form's POST.
    reply.header('referrer-policy', 'same-origin');
    reply.header('x-frame-options', 'DENY');
  });

  const sessionOf = async (request: FastifyRequest): Promise<string | undefined> => {
    const token = request.cookies[consoleCookie];
    return token ? operatorOfSession(deps.operators, token) : undefined;
  };
  const setSession = (request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSeconds: number) =>
    reply.setCookie(consoleCookie, token, {
      path: '/console', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https', maxAge: maxAgeSeconds,
    });

  const page = { tags: ['console'], produces: ['text/html'] };
  app.get('', zodRoute({ ...page, summary: 'The console page (redirects to the login page without a session)' }), async (request, reply) => {
    if (!(await sessionOf(request))) return reply.redirect('/console/login', 303);
    return reply.type(html).header('cache-control', 'no-store').send(consolePage);
  });

  app.get('/view', zodRoute({ ...page, summary: 'A receipt, transaction, statement or operator\'s day as a page (?src=/console/api/…, or the Statements form\'s tid and date); its JSON one click away' }), async (request, reply) => {
    if (!(await sessionOf(request))) return reply.redirect('/console/login', 303);
    return reply.type(html).header('cache-control', 'no-store').send(viewPage);
  });

  app.get('/login', zodRoute({ ...page, summary: 'The operator login page' }), async (_request, reply) =>
    reply.type(html).header('cache-control', 'no-store').send(renderLogin()));

  app.post('/login', zodRoute({
    ...page, summary: 'Operator login (form: username, password); sets the session cookie',
    body: { content: { 'application/x-www-form-urlencoded': { schema: loginForm } } },
  }), async (request, reply) => {
    if (crossOrigin(request)) return reply.status(403).type(html).send(renderLogin('Refused: the form was sent from another site.'));
    const form = loginForm.safeParse(request.body);
    if (!form.success) return reply.status(400).type(html).send(renderLogin('Enter a username and a password.'));
    try {
      const session = await loginOperator(deps.operators, { ...form.data, ip: request.ip });
      setSession(request, reply, session.token, Math.floor(deps.operators.sessionTtlMs / 1000));
      return reply.redirect('/console', 303);
    } catch (error) {
      if (!isDomainError(error)) throw error;
      const status = error.code === 'auth.rate_limited' ? 429 : 401;
      if (error instanceof LoginRateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
      const message = status === 429 ? 'Too many failed logins: try again later.' : 'Wrong username or password.';
      return reply.status(status).type(html).send(renderLogin(message));
    }
  });

  app.post('/logout', zodRoute({ ...page, summary: 'Ends the operator\'s session' }), async (request, reply) => {
    if (crossOrigin(request)) return reply.status(403).send({ error: { code: 'request.unauthorized', message: 'cross-site request' } });
    const token = request.cookies[consoleCookie];
    if (token) await logoutOperator(deps.operators, token);
    reply.clearCookie(consoleCookie, { path: '/console' });
    return reply.redirect('/console/login', 303);
  });

  app.get('/assets/:file', zodRoute({ params: assetParams, tags: ['console'], summary: 'The console\'s script, style and chart library (our origin, no CDN)' }), async (request, reply) => {
    const parsed = assetParams.safeParse(request.params);
    if (!parsed.success) throw new DomainError('request.not_found', 'no such console file');
    const asset = assets[parsed.data.file]!;
    return reply.type(asset.type).header('cache-control', 'no-cache').send(asset.body);
  });

  await app.register(async (api) => {
    api.addHook('preHandler', async (request) => {
      if (!(await sessionOf(request))) throw new DomainError('request.unauthorized', 'log in at /console/login');
    });
    await consoleApiRoutes(api, deps);
    if (deps.statements) await consoleStatementRoutes(api, { statements: deps.statements });
  }, { prefix: '/api' });
}
