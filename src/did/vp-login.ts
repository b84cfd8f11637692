import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { DidAgent } from './did-agent.ts';
import type { DidRepository } from '../store/did-repository.ts';
import { normalizeDid } from './did-identifiers.ts';
import { agentResolver, audienceOf, jwtOf, verifyPresentationDocument } from './jwt-credentials.ts';

export interface VpLoginDeps {
  agent: DidAgent;
  repository: DidRepository;
  clock?: Clock;
  /** The longest lifetime (exp - iat) a login VP may have; default 1 hour. */
  maxPresentationLifetimeSeconds?: number;
}

export interface LoginPresentation {
  /** The presentation's holder (its JWT `iss`), `did:ethr:<checksummed address>` for ours. */
  holderDid: string;
}

export type VerifyLoginPresentation = (vp: unknown) => Promise<LoginPresentation>;

// did-jwt accepts `exp` up to 5 minutes late (clock skew); used hashes are kept past that.
const skewMs = 10 * 60 * 1000;

/**
 * The VP check of `auth-user-with-vp` (docs/interfaces.md#authentication 4): the presentation verifies
 * (signature, `exp`, every credential), is addressed to one of our verifiers, has an expiry no
 * further than the allowed lifetime, carries at least one credential, every credential was issued
 * by one of our issuers to the presentation's holder, and it was never used before (its JWT's hash
 * is recorded atomically, so a replay is refused even when two arrive at once). Any failure throws
 * `did.presentation_refused` with the reason.
 */
export function createVpLogin(deps: VpLoginDeps): VerifyLoginPresentation {
  const { agent, repository } = deps;
  const clock = deps.clock ?? systemClock;
  const maxLifetime = deps.maxPresentationLifetimeSeconds ?? 3600;
  const resolver = agentResolver(agent);
  const refuse = (reason: string) => new DomainError('did.presentation_refused', `presentation refused: ${reason}`);

  return async (vp) => {
    const jwt = jwtOf(vp);
    if (!jwt) throw refuse('a presentation with proof.jwt is required');
    const verifiers = new Set((await repository.listByRole('verifier')).map((entry) => entry.did));
    const audience = audienceOf(vp).find((did) => verifiers.has(normalizeDid(did)));
    if (!audience) throw refuse('its verifier is not a verifier of this system');

    const result = await verifyPresentationDocument(resolver, vp, audience);
    if (!result.verified) throw refuse(result.error.message);
    const payload = result.payload as { iss?: string; exp?: number; iat?: number; nbf?: number };
    const issuedAt = payload.nbf ?? payload.iat;
    if (typeof payload.exp !== 'number' || typeof issuedAt !== 'number') throw refuse('it has no expiration');
    if (payload.exp - issuedAt > maxLifetime) throw refuse(`its lifetime exceeds ${maxLifetime} seconds`);

    const presentation = result.verifiablePresentation as { holder?: string; verifiableCredential?: unknown[] };
    const holderDid = normalizeDid(presentation.holder ?? payload.iss ?? '');
    const credentials = presentation.verifiableCredential ?? [];
    if (credentials.length === 0) throw refuse('it carries no credential');
    const issuers = new Set((await repository.listByRole('issuer')).map((entry) => entry.did));
    for (const [index, credential] of credentials.entries()) {
      const { issuer, credentialSubject } = credential as { issuer?: { id?: string }; credentialSubject?: { id?: string } };
      if (!issuer?.id || !issuers.has(normalizeDid(issuer.id))) throw refuse(`verifiableCredential[${index}] was not issued by this system`);
      if (!credentialSubject?.id || normalizeDid(credentialSubject.id) !== holderDid) {
        throw refuse(`verifiableCredential[${index}] was issued to another holder`);
      }
    }

    const now = clock();
    await repository.deleteExpiredPresentations(now);
    const fresh = await repository.markPresentationUsed({ jwtHash: sha256Hex(jwt), holderDid, expiresAt: payload.exp * 1000 + skewMs }, now);
    if (!fresh) throw refuse('it was already used');
    return { holderDid };
  };
}
