import { getAddress, isAddress, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount, publicKeyToAddress } from 'viem/accounts';
import type { IIdentifier, MinimalImportableKey } from '@veramo/core';
import type { DidAgent } from './did-agent.ts';
import { ethrProvider, localKms } from './did-agent.ts';
import { tokenKms } from './token-kms.ts';
import type { DidListEntry, DidRepository, SystemDidRole } from '../store/did-repository.ts';

const ethrAddressDid = /^did:ethr:(0x[0-9a-fA-F]{40})$/;

/** `did:ethr:<checksummed address>`: the one spelling of the DIDs we make and compare. */
export function didForAddress(address: string): string {
  return `did:ethr:${getAddress(address)}`;
}

/** The address of a `did:ethr:<address>` (any letter case), or undefined for any other DID. */
export function addressOfDid(did: string): Hex | undefined {
  const address = ethrAddressDid.exec(did)?.[1];
  return address && isAddress(address, { strict: false }) ? getAddress(address) : undefined;
}

/** A did:ethr address DID in our spelling; any other DID unchanged. */
export function normalizeDid(did: string): string {
  const address = addressOfDid(did);
  return address ? didForAddress(address) : did;
}

/** A key of the docs/interfaces.md#did-vc-and-vp DID record: private material is never returned, only its empty fields. */
export interface DidRecordKey {
  kid: string;
  kms: string;
  type: string;
  publicKeyHex: string;
  privateKeyHex: '';
  meta: { algorithms: string[]; secretKey: '' };
}

/** The create-did response (docs/interfaces.md#did-record), Veramo's identifier without secrets. */
export interface DidRecord {
  did: string;
  controllerKeyId: string;
  provider: string;
  alias: string;
  keys: DidRecordKey[];
  services: unknown[];
}

export function toDidRecord(identifier: IIdentifier): DidRecord {
  return {
    controllerKeyId: identifier.controllerKeyId ?? '',
    provider: identifier.provider,
    keys: identifier.keys.map((key) => ({
      kid: key.kid, kms: key.kms, type: key.type, publicKeyHex: key.publicKeyHex,
      privateKeyHex: '',
      meta: { algorithms: [...(key.meta?.algorithms ?? [])], secretKey: '' },
    })),
    alias: identifier.alias ?? '',
    services: [...identifier.services],
    did: identifier.did,
  };
}

/**
 * Imports a secp256k1 private key as `did:ethr:<its address>` (kid: the uncompressed public key,
 * as Veramo's local KMS names keys) and answers the stored identifier. Importing the same key again
 * keeps the first alias.
 */
export async function importEthrDid(agent: DidAgent, privateKey: Hex, alias: string): Promise<IIdentifier> {
  const account = privateKeyToAccount(privateKey);
  const did = didForAddress(account.address);
  const existing = await agent.didManagerGet({ did }).catch(() => undefined);
  if (existing) return existing;
  const kid = account.publicKey.slice(2);
  await agent.didManagerImport({
    did, provider: ethrProvider, alias, controllerKeyId: kid, services: [],
    keys: [{ kid, kms: localKms, type: 'Secp256k1', privateKeyHex: privateKey.slice(2) }],
  });
  return agent.didManagerGet({ did });
}

/**
 * `did:ethr:<address>` over a wallet whose key is in the HSM token: Veramo keeps its public key only,
 * under the pkcs11 KMS (token-kms.ts), which signs in the token. Importing it again keeps the first alias.
 */
export async function importTokenEthrDid(agent: DidAgent, publicKey: Hex, alias: string): Promise<IIdentifier> {
  const did = didForAddress(publicKeyToAddress(publicKey));
  const existing = await agent.didManagerGet({ did }).catch(() => undefined);
  if (existing) return existing;
  const kid = publicKey.slice(2);
  await agent.didManagerImport({
    did, provider: ethrProvider, alias, controllerKeyId: kid, services: [],
    // Veramo's type asks every imported key for its private key; the pkcs11 KMS takes the public key only.
    keys: [{ kid, kms: tokenKms, type: 'Secp256k1', publicKeyHex: kid } as MinimalImportableKey],
  });
  return agent.didManagerGet({ did });
}

/** Aliases of the system DIDs made at first start. */
export const systemDidAliases: Readonly<Record<SystemDidRole, string>> = {
  issuer: 'vixpay-issuer',
  verifier: 'vixpay-verifier',
};

/**
 * Makes the system issuer and verifier DIDs the first time (fresh keys, sealed in our store) and
 * reuses them on every later start. Answers both lists.
 */
export async function ensureSystemDids(deps: { agent: DidAgent; repository: DidRepository }): Promise<Record<SystemDidRole, DidListEntry[]>> {
  const result = {} as Record<SystemDidRole, DidListEntry[]>;
  for (const role of ['issuer', 'verifier'] as const) {
    let entries = await deps.repository.listByRole(role);
    if (entries.length === 0) {
      const identifier = await importEthrDid(deps.agent, generatePrivateKey(), systemDidAliases[role]);
      await deps.repository.setRole(identifier.did, role);
      entries = await deps.repository.listByRole(role);
    }
    result[role] = entries;
  }
  return result;
}
