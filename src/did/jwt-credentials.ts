import {
  createVerifiableCredentialJwt, createVerifiablePresentationJwt, normalizeCredential, normalizePresentation,
  verifyCredential, verifyPresentation,
} from 'did-jwt-vc';
import { randomUUID } from 'node:crypto';
import type { IKey } from '@veramo/core';
import { isDomainError } from '#shared/errors.ts';
import type { DidAgent } from './did-agent.ts';

// VCs and VPs as JWTs (proof type JwtProof2020), in the shape Veramo gives them (docs/interfaces.md#did-vc-and-vp "DID, VC
// and VP objects"). Veramo 7 moved JWT proofs out of @veramo/credential-w3c into a provider package
// whose VP verification result no longer has docs/interfaces.md#did-vc-and-vp's shape, so we call did-jwt-vc (the library
// that provider wraps) with Veramo's key manager as signer and Veramo's resolver.

export const credentialContext = 'https://www.w3.org/2018/credentials/v1';

/** A JSON object of a W3C credential or presentation with its JWT proof. */
export type JsonObject = Record<string, unknown>;

/** The docs/interfaces.md#did-vc-and-vp verification result: did-jwt's fields plus the normalised document. */
export type VerificationResult =
  | ({ verified: true } & JsonObject)
  | { verified: false; error: { errorCode: string; message: string } };

export interface SigningIdentity {
  did: string;
  key: Pick<IKey, 'kid'>;
}

type Resolver = Parameters<typeof verifyCredential>[1];

function signerFor(agent: DidAgent, key: Pick<IKey, 'kid'>) {
  return (data: string | Uint8Array) =>
    agent.keyManagerSign({ keyRef: key.kid, data: typeof data === 'string' ? data : Buffer.from(data).toString('utf8'), algorithm: 'ES256K' });
}

/** Resolves DIDs through the agent (our chain only). */
export function agentResolver(agent: DidAgent): Resolver {
  return { resolve: (didUrl: string) => agent.resolveDid({ didUrl }) } as Resolver;
}

export interface IssueCredentialParameters {
  issuer: SigningIdentity;
  /** `credentialSubject`, its `id` the holder DID (which did-jwt-vc moves to the JWT's `sub` claim). */
  subject: JsonObject & { id: string };
  type: string[];
  issuedAt: Date;
}

/** Signs a credential as a JWT and answers its W3C form. */
export async function issueCredential(agent: DidAgent, params: IssueCredentialParameters): Promise<JsonObject> {
  const jwt = await createVerifiableCredentialJwt(
    {
      '@context': [credentialContext],
      type: params.type,
      issuer: { id: params.issuer.did },
      issuanceDate: params.issuedAt.toISOString(),
      credentialSubject: params.subject,
    },
    { did: params.issuer.did, signer: signerFor(agent, params.issuer.key), alg: 'ES256K' },
  );
  return normalizeCredential(jwt) as unknown as JsonObject;
}

export interface IssuePresentationParameters {
  holder: SigningIdentity;
  verifier: string[];
  /** Credential JWTs. */
  credentials: string[];
  issuedAt: Date;
  expiresAt: Date;
}

/**
 * Signs a presentation as a JWT (`aud` = verifiers, `exp` set) and answers its W3C form. Each gets a
 * random `id` (JWT `jti`): ES256K signatures are deterministic, so two VPs of the same credentials
 * made in the same second would otherwise be the same VP, and a login accepts a VP only once.
 */
export async function issuePresentation(agent: DidAgent, params: IssuePresentationParameters): Promise<JsonObject> {
  const jwt = await createVerifiablePresentationJwt(
    {
      '@context': [credentialContext],
      id: `urn:uuid:${randomUUID()}`,
      type: ['VerifiablePresentation'],
      holder: params.holder.did,
      verifier: params.verifier,
      issuanceDate: params.issuedAt.toISOString(),
      expirationDate: params.expiresAt.toISOString(),
      verifiableCredential: params.credentials,
    },
    { did: params.holder.did, signer: signerFor(agent, params.holder.key), alg: 'ES256K' },
  );
  return normalizePresentation(jwt) as unknown as JsonObject;
}

/** The JWT of a VC/VP given either as the JWT itself or as its W3C form with `proof.jwt`. */
export function jwtOf(document: unknown): string | undefined {
  if (typeof document === 'string') return document;
  const proof = (document as { proof?: { jwt?: unknown } } | null)?.proof;
  return typeof proof?.jwt === 'string' ? proof.jwt : undefined;
}

/** The `verifier` DIDs a VP names (its JWT `aud`), read without verifying anything. */
export function audienceOf(document: unknown): string[] {
  const jwt = jwtOf(document);
  const payload = jwt?.split('.')[1];
  if (!payload) return [];
  try {
    const { aud } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { aud?: unknown };
    return (Array.isArray(aud) ? aud : [aud]).filter((value): value is string => typeof value === 'string');
  } catch {
    return [];
  }
}

function refused(errorCode: string, message: string): VerificationResult {
  return { verified: false, error: { errorCode, message } };
}

/**
 * A verification that failed for a reason of the document: `verified: false`. One that could not be
 * made because the chain's node did not answer a DID resolution (`chain.unavailable`) is thrown: the
 * document may well verify, the caller asks again later.
 */
function failure(error: unknown): VerificationResult {
  if (isDomainError(error) && error.code === 'chain.unavailable') throw error;
  const message = error instanceof Error ? error.message : String(error);
  const errorCode = (error as { errorCode?: unknown })?.errorCode;
  return refused(typeof errorCode === 'string' ? errorCode : (/^([a-z_]+):/.exec(message)?.[1] ?? 'invalid_jwt'), message);
}

/** JSON with object keys sorted: equal documents give equal text whatever their key order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as JsonObject).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The fields sent beside the JWT must say what the JWT says: a changed `credentialSubject` in the
 * JSON would otherwise be shown as verified while only the JWT was checked. Fields left out are
 * fine (the JWT alone is the credential).
 */
function mismatchedField(sent: unknown, verified: JsonObject): string | undefined {
  if (typeof sent !== 'object' || sent === null) return undefined;
  for (const [field, value] of Object.entries(sent as JsonObject)) {
    if (field === 'proof') {
      if (canonical(value) !== canonical(verified.proof)) return field;
    } else if (canonical(value) !== canonical(verified[field])) {
      return field;
    }
  }
  return undefined;
}

/**
 * Verifies a VC (JWT or W3C form): never throws for a bad credential, answers `verified: false`;
 * throws `chain.unavailable` when the chain's node did not answer its issuer's resolution.
 */
export async function verifyCredentialDocument(resolver: Resolver, document: unknown): Promise<VerificationResult> {
  const jwt = jwtOf(document);
  if (!jwt) return refused('invalid_argument', 'a credential with proof.jwt (or its JWT) is required');
  try {
    const result = await verifyCredential(jwt, resolver);
    const field = mismatchedField(document, result.verifiableCredential as unknown as JsonObject);
    if (field) return refused('invalid_credential', `invalid_credential: Credential JSON does not match JWT payload (${field})`);
    return { ...(result as unknown as JsonObject), verified: true };
  } catch (error) {
    return failure(error);
  }
}

/**
 * Verifies a VP (JWT or W3C form) and every credential in it. `audience`: the verifier DID the
 * presentation must be addressed to; without one the `aud` claim is not checked. Throws
 * `chain.unavailable` as verifyCredentialDocument does.
 */
export async function verifyPresentationDocument(resolver: Resolver, document: unknown, audience?: string): Promise<VerificationResult> {
  const jwt = jwtOf(document);
  if (!jwt) return refused('invalid_argument', 'a presentation with proof.jwt (or its JWT) is required');
  try {
    const result = await verifyPresentation(jwt, resolver, audience ? { audience } : { policies: { aud: false } });
    const presentation = result.verifiablePresentation as unknown as JsonObject;
    const field = mismatchedField(document, presentation);
    if (field) return refused('invalid_presentation', `invalid_presentation: Presentation JSON does not match JWT payload (${field})`);
    const credentials = (presentation.verifiableCredential as unknown[] | undefined) ?? [];
    for (const [index, credential] of credentials.entries()) {
      const checked = await verifyCredentialDocument(resolver, credential);
      if (!checked.verified) return refused(checked.error.errorCode, `verifiableCredential[${index}]: ${checked.error.message}`);
    }
    return { ...(result as unknown as JsonObject), verified: true };
  } catch (error) {
    return failure(error);
  }
}
