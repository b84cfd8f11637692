import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import { zodRoute } from '../route-schema.ts';
import type { VerifyLoginPresentation } from '../../../did/vp-login.ts';
import type { LoginService } from '../../../identity/login.ts';
import type { WebsiteLoginService } from '../../../identity/website-login.ts';

export interface AuthVpRoutesDeps {
  verifyLoginPresentation: VerifyLoginPresentation;
  /**
   * The user a VP holder logs in as: the user whose wallet address is the DID's address
   * (`did:ethr:<address>`), see docs/did-api.md "VP login".
   */
  findUserIdByHolder: (holderDid: string) => Promise<string | undefined>;
  login: Pick<LoginService, 'issueForUser'>;
  websiteLogins: Pick<WebsiteLoginService, 'describe' | 'complete'>;
}

const bodyLimit = 256 * 1024;

const body = z.object({
  vp: z.union([z.record(z.string(), z.unknown()), z.string().min(1)]),
  // Absent, null or "" for the app's own login; the QR code's value for a website login.
  requestId: z.string().max(2048).nullish().transform((value) => value || undefined),
});

/**
 * `POST /auth-user-with-vp` (docs/interfaces.md#authentication-api); register under `/v2/auth`:
 * `app.register(authVpRoutes, { prefix: '/v2/auth', ...deps })`. Answers the authenticated user record
 * with a fresh JWT; with a `requestId` it also completes that website login. A VP is accepted once.
 */
export async function authVpRoutes(app: FastifyInstance, deps: AuthVpRoutesDeps): Promise<void> {
  app.post('/auth-user-with-vp', { bodyLimit, ...zodRoute({ body, tags: ['auth'], summary: 'Log in with a verifiable presentation (optionally completing a website login)' }) }, async (request) => {
    const parsed = body.safeParse(request.body ?? {});
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
      throw new DomainError('request.invalid', problems, { details: problems });
    }
    const { vp, requestId } = parsed.data;
    // An unknown or expired website request is refused before the VP is spent on it.
    if (requestId) await deps.websiteLogins.describe(requestId);
    const { holderDid } = await deps.verifyLoginPresentation(vp);
    const userId = await deps.findUserIdByHolder(holderDid);
    if (!userId) throw new DomainError('did.presentation_refused', `presentation refused: no user has the wallet of ${holderDid}`);
    if (requestId) await deps.websiteLogins.complete(requestId, userId);
    return deps.login.issueForUser(userId);
  });
}
