import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DomainError } from '#shared/errors.ts';
import type { DidService } from '../../../did/did-service.ts';
import { requireUser, currentUser, type AccessTokenVerifier } from '../auth-hook.ts';
import { userJwt, zodRoute } from '../route-schema.ts';

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

/** verify-vc and verify-vp take any JSON: what does not verify is answered `verified: false`, never refused. */
const credentialDocument = z.unknown().describe('A verifiable credential: its JSON-LD document (with its proof) or its JWT');
const presentationDocument = z.unknown().describe('A verifiable presentation: its JSON-LD document (with its proof) or its JWT');

function parse<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join('.') || 'body'}: ${issue.message}`).join('; ');
  throw new DomainError('request.invalid', problems, { details: problems });
}

/**
 * The DID endpoints of the authentication API (docs/interfaces.md#authentication-api, `/did/*`). Register
 * under `/v2/did`: `app.register(didRoutes, { prefix: '/v2/did', did, verifyAccessToken, walletAddressOf })`.
 * verify-vc and verify-vp answer 200 with `verified: false` and `error` for a credential or
 * presentation that does not verify; only a body that is not JSON is an HTTP error.
 */
export async function didRoutes(app: FastifyInstance, deps: DidRoutesDeps): Promise<void> {
  const { did } = deps;
  app.get('/issuers', { schema: { tags: ['did'], summary: 'The system issuers' } }, async () => did.listIssuers());
  app.get('/verifiers', { schema: { tags: ['did'], summary: 'The system verifiers' } }, async () => did.listVerifiers());

  app.post('/create-did', { bodyLimit: smallBodyLimit, ...zodRoute({ body: createDidBody, tags: ['did'], summary: 'Register the did:ethr of a wallet' }) }, async (request) => did.createDid(parse(createDidBody, request.body)));

  app.post('/create-vc', { bodyLimit: documentBodyLimit, ...zodRoute({ body: createVcBody, tags: ['did'], summary: 'Issue a verifiable credential to the caller', security: userJwt }), preHandler: requireUser(deps.verifyAccessToken) }, async (request) => {
    const body = parse(createVcBody, request.body);
    const callerWalletAddress = await deps.walletAddressOf(currentUser(request).userId);
    return did.createCredential({ ...body, callerWalletAddress });
  });

  app.post('/verify-vc', { bodyLimit: documentBodyLimit, ...zodRoute({ body: credentialDocument, tags: ['did'], summary: 'Verify a verifiable credential' }) }, async (request) => did.verifyCredential(credentialDocument.parse(request.body)));

  app.post('/create-vp', { bodyLimit: documentBodyLimit, ...zodRoute({ body: createVpBody, tags: ['did'], summary: 'Make a verifiable presentation of credentials for a verifier' }) }, async (request) => did.createPresentation(parse(createVpBody, request.body)));

  app.post('/verify-vp', { bodyLimit: documentBodyLimit, ...zodRoute({ body: presentationDocument, tags: ['did'], summary: 'Verify a verifiable presentation' }) }, async (request) => did.verifyPresentation(presentationDocument.parse(request.body)));
}
