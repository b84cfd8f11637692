import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError } from '../../../shared/errors.ts';
import type { DidService } from '../../../did/did-service.ts';
import { requireUser, currentUser, type AccessTokenVerifier } from '../auth-hook.ts';

export interface DidRoutesDeps {
  did: DidService;
  /** Verifies the `Authorization: Bearer` JWT of create-vc. */
  verifyAccessToken: AccessTokenVerifier;
  /** The wallet address of a user (the holder create-vc may issue to), from src/identity. */
  walletAddressOf: (userId: string) => Promise<string | undefined>;
}

/** Small bodies for DID creation; VCs and VPs carry JWTs and user info, so more room. */
const smallBodyLimit = 16 * 1024;
const documentBodyLimit = 256 * 1024;

const createDidBody = z.object({
  alias: z.string().min(1).max(128),
  address: z.string().min(1).max(64),
  secretKey: z.string().min(1).max(256),
});
const createVcBody = z.object({
  holder: z.string().min(1).max(256),
  issuer: z.string().min(1).max(256),
  userInfo: z.unknown().optional(),
});
const createVpBody = z.object({
  holder: z.string().min(1).max(256),
  verifier: z.string().min(1).max(256),
  credentials: z.array(z.unknown()).min(1),
});

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
  throw new DomainError('request.invalid', problems, { details: problems });
}

/**
 * The DID endpoints of the authentication API (SPEC.md "Authentication API", `/did/*`). Register
 * under `/v2/did`: `app.register(didRoutes, { prefix: '/v2/did', did, verifyAccessToken, walletAddressOf })`.
 * verify-vc and verify-vp answer 200 with `verified: false` and `error` for a credential or
 * presentation that does not verify; only a body that is not JSON is an HTTP error.
 */
export async function didRoutes(app: FastifyInstance, deps: DidRoutesDeps): Promise<void> {
  const { did } = deps;
  app.get('/issuers', async () => did.listIssuers());
  app.get('/verifiers', async () => did.listVerifiers());

  app.post('/create-did', { bodyLimit: smallBodyLimit }, async (request) => did.createDid(parse(createDidBody, request.body)));

  app.post('/create-vc', { bodyLimit: documentBodyLimit, preHandler: requireUser(deps.verifyAccessToken) }, async (request) => {
    const body = parse(createVcBody, request.body);
    const callerWalletAddress = await deps.walletAddressOf(currentUser(request).userId);
    return did.createCredential({ ...body, callerWalletAddress });
  });

  app.post('/verify-vc', { bodyLimit: documentBodyLimit }, async (request) => did.verifyCredential(request.body));

  app.post('/create-vp', { bodyLimit: documentBodyLimit }, async (request) => did.createPresentation(parse(createVpBody, request.body)));

  app.post('/verify-vp', { bodyLimit: documentBodyLimit }, async (request) => did.verifyPresentation(request.body));
}
