import { getAddress, isAddress, type Address, type Hex } from 'viem';
import type { IIdentifier } from '@veramo/core';
import { DomainError } from '#shared/errors.ts';
import { safeEqual } from '#shared/hash.ts';
import { systemClock, type Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import type { DidAgent } from './did-agent.ts';
import type { DidListEntry, DidRepository } from '../store/did-repository.ts';
import { addressOfDid, didForAddress, importEthrDid, importTokenEthrDid, normalizeDid, toDidRecord, type DidRecord } from './did-identifiers.ts';
import {
  agentResolver, audienceOf, issueCredential, issuePresentation, jwtOf, verifyCredentialDocument, verifyPresentationDocument,
  type JsonObject, type VerificationResult,
} from './jwt-credentials.ts';
import { validateUserInfo } from './user-info.ts';

export const didLimits = {
  aliasMaxLength: 128,
  didMaxLength: 256,
  maxCredentialsPerPresentation: 10,
  /** A VP made by create-vp expires after this long: a login must follow soon. */
  defaultPresentationTtlSeconds: 600,
} as const;

/** Type of every credential create-vc makes (docs/interfaces.md#did-vc-and-vp). */
export const profileCredentialType = ['VerifiableCredential', 'Profile'];

export interface DidServiceDeps {
  agent: DidAgent;
  repository: DidRepository;
  wallets: Pick<WalletRepository, 'findAccount'>;
  vault: KeyVault;
  clock?: Clock;
  presentationTtlSeconds?: number;
  /** With KEY_CUSTODY=pkcs11: the public key of a wallet whose key is wrapped by the token (one signature there, recovered). */
  tokenPublicKey?: ((privateKeyEnc: string, address: Address) => Promise<Hex>) | undefined;
}

export interface CreateDidParameters {
  alias: string;
  address: string;
  secretKey: string;
}

export interface CreateCredentialParameters {
  holder: string;
  issuer: string;
  userInfo?: unknown;
  /** Wallet address of the authenticated caller: the only holder it may get a credential for. */
  callerWalletAddress: string | undefined;
}

export interface CreatePresentationParameters {
  holder: string;
  verifier: string;
  credentials: unknown[];
}

export interface DidService {
  listIssuers(): Promise<DidListEntry[]>;
  listVerifiers(): Promise<DidListEntry[]>;
  /** `did:ethr:<address>` with the wallet account's own key; idempotent per address. */
  createDid(params: CreateDidParameters): Promise<DidRecord>;
  createCredential(params: CreateCredentialParameters): Promise<JsonObject>;
  verifyCredential(document: unknown): Promise<VerificationResult>;
  createPresentation(params: CreatePresentationParameters): Promise<JsonObject>;
  verifyPresentation(document: unknown): Promise<VerificationResult>;
}

const secretMismatch = 'address and secretKey do not match a wallet account';

function requireDid(value: string, field: string): string {
  if (value.length > didLimits.didMaxLength || !/^did:[a-z0-9]+:[A-Za-z0-9._:%-]+$/.test(value)) {
    throw new DomainError('request.invalid', `${field}: not a DID`, { details: field });
  }
  return normalizeDid(value);
}

export function createDidService(deps: DidServiceDeps): DidService {
  const { agent, repository, wallets, vault } = deps;
  const clock = deps.clock ?? systemClock;
  const ttlMs = (deps.presentationTtlSeconds ?? didLimits.defaultPresentationTtlSeconds) * 1000;
  const resolver = agentResolver(agent);

  const systemDid = async (role: 'issuer' | 'verifier', did: string): Promise<IIdentifier> => {
    const entries = await repository.listByRole(role);
    if (!entries.some((entry) => entry.did === did)) {
      throw role === 'issuer'
        ? new DomainError('did.not_system_issuer', `${did} is not an issuer of this system (GET /did/issuers)`)
        : new DomainError('did.not_system_verifier', `${did} is not a verifier of this system (GET /did/verifiers)`);
    }
    return agent.didManagerGet({ did });
  };
  const signingIdentity = (identifier: IIdentifier) => {
    const kid = identifier.controllerKeyId ?? identifier.keys[0]?.kid;
    if (!kid) throw new DomainError('did.key_not_held', `no key for ${identifier.did}`);
    return { did: identifier.did, key: { kid } };
  };

  return {
    listIssuers: () => repository.listByRole('issuer'),
    listVerifiers: () => repository.listByRole('verifier'),

    async createDid({ alias, address, secretKey }) {
      if (alias.length === 0 || alias.length > didLimits.aliasMaxLength) {
        throw new DomainError('request.invalid', `alias: 1 to ${didLimits.aliasMaxLength} characters`, { details: 'alias' });
      }
      if (!isAddress(address, { strict: false })) throw new DomainError('request.invalid', 'address: not an address', { details: 'address' });
      const account = await wallets.findAccount(getAddress(address));
      // One answer for an unknown address and a wrong secretKey, compared in constant time.
      const stored = account ? vault.decrypt(account.secretKeyEnc) : '';
      if (!safeEqual(stored, secretKey) || !account) throw new DomainError('did.secret_key_invalid', secretMismatch);
      // A key wrapped by the HSM (KEY_CUSTODY=pkcs11) never leaves it: the DID's key is its public key,
      // under the pkcs11 KMS, which signs in the token.
      if (account.privateKeyEnc.startsWith('p11:')) {
        if (!deps.tokenPublicKey) throw new DomainError('did.key_not_held', 'this wallet\'s key is held in an HSM this platform does not use (KEY_CUSTODY=pkcs11)');
        const publicKey = await deps.tokenPublicKey(account.privateKeyEnc, getAddress(account.address));
        return toDidRecord(await importTokenEthrDid(agent, publicKey, alias));
      }
      const identifier = await importEthrDid(agent, vault.decrypt(account.privateKeyEnc) as Hex, alias);
      return toDidRecord(identifier);
    },

    async createCredential(params) {
      const holder = requireDid(params.holder, 'holder');
      const issuer = await systemDid('issuer', requireDid(params.issuer, 'issuer'));
      const userInfo = validateUserInfo(params.userInfo);
      if (!params.callerWalletAddress || holder !== didForAddress(params.callerWalletAddress)) {
        throw new DomainError('did.holder_not_caller', 'holder must be the DID of your own wallet address (did:ethr:<address>)');
      }
      return issueCredential(agent, {
        issuer: signingIdentity(issuer),
        // docs/interfaces.md#did-vc-and-vp: the user info keys, `sub` and `id`, both the holder DID (`sub` also the JWT claim).
        subject: { ...userInfo, sub: holder, id: holder },
        type: profileCredentialType,
        issuedAt: new Date(clock()),
      });
    },

    verifyCredential: (document) => verifyCredentialDocument(resolver, document),

    async createPresentation(params) {
      const verifier = await systemDid('verifier', requireDid(params.verifier, 'verifier'));
      const holderDid = requireDid(params.holder, 'holder');
      if (!addressOfDid(holderDid) || !(await repository.exists(holderDid))) {
        throw new DomainError('did.key_not_held', `${holderDid} was not created here (POST /did/create-did)`);
      }
      const holder = await agent.didManagerGet({ did: holderDid });
      if (!Array.isArray(params.credentials) || params.credentials.length === 0 || params.credentials.length > didLimits.maxCredentialsPerPresentation) {
        throw new DomainError('request.invalid', `credentials: 1 to ${didLimits.maxCredentialsPerPresentation} credentials`, { details: 'credentials' });
      }
      const jwts: string[] = [];
      for (const [index, credential] of params.credentials.entries()) {
        const checked = await verifyCredentialDocument(resolver, credential);
        if (!checked.verified) throw new DomainError('request.invalid', `credentials[${index}]: ${checked.error.message}`, { details: 'credentials' });
        const subject = (checked.verifiableCredential as { credentialSubject?: { id?: unknown } }).credentialSubject;
        if (typeof subject?.id !== 'string' || normalizeDid(subject.id) !== holder.did) {
          throw new DomainError('request.invalid', `credentials[${index}]: credentialSubject.id is not the holder`, { details: 'credentials' });
        }
        jwts.push(jwtOf(credential)!);
      }
      const now = clock();
      return issuePresentation(agent, {
        holder: signingIdentity(holder),
        verifier: [verifier.did],
        credentials: jwts,
        issuedAt: new Date(now),
        expiresAt: new Date(now + ttlMs),
      });
    },

    async verifyPresentation(document) {
      // Checked against one of our verifiers when addressed to one; otherwise `aud` is not checked.
      const verifiers = new Set((await repository.listByRole('verifier')).map((entry) => entry.did));
      const audience = audienceOf(document).find((did) => verifiers.has(normalizeDid(did)));
      return verifyPresentationDocument(resolver, document, audience);
    },
  };
}
