import { randomBytes } from 'node:crypto';
import { existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type CryptoKey, type JWK } from 'jose';

/** The one JWS algorithm we sign and accept: EdDSA over Ed25519 (RFC 8037). */
export const accessTokenAlgorithm = 'EdDSA';

/** A public key as served at `/.well-known/jwks.json`. */
export interface PublicSigningJwk extends JWK {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
  kid: string;
  alg: typeof accessTokenAlgorithm;
  use: 'sig';
}

export interface SigningKey {
  kid: string;
  publicJwk: PublicSigningJwk;
  publicKey: CryptoKey;
  /** Absent for verify-only keys (retired keys kept until their tokens expire). */
  privateKey?: CryptoKey;
}

/** The first key signs; every key verifies tokens carrying its `kid`. */
export interface SigningKeySet {
  active: SigningKey & { privateKey: CryptoKey };
  byKid: ReadonlyMap<string, SigningKey>;
}

/** File name inside DATA_DIR. */
export const signingKeyFileName = 'jwt-signing-key.json';

interface KeyFile {
  keys: JWK[];
}

async function fromJwk(jwk: JWK): Promise<SigningKey> {
  if (jwk.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string') {
    throw new Error('JWT signing keys must be Ed25519 (kty OKP, crv Ed25519)');
  }
  const publicPart = { kty: 'OKP', crv: 'Ed25519', x: jwk.x } as const;
  const kid = await calculateJwkThumbprint(publicPart, 'sha256');
  if (jwk.kid !== undefined && jwk.kid !== kid) throw new Error(`JWT signing key kid ${jwk.kid} is not its thumbprint ${kid}`);
  const publicJwk: PublicSigningJwk = { ...publicPart, kid, alg: accessTokenAlgorithm, use: 'sig' };
  const publicKey = (await importJWK(publicJwk, accessTokenAlgorithm)) as CryptoKey;
  const privateKey = jwk.d === undefined ? undefined : (await importJWK({ ...publicPart, d: jwk.d }, accessTokenAlgorithm)) as CryptoKey;
  return privateKey ? { kid, publicJwk, publicKey, privateKey } : { kid, publicJwk, publicKey };
}

/** Builds the key set from JWKs (the first must hold its private part `d`). */
export async function signingKeySetFromJwks(jwks: readonly JWK[]): Promise<SigningKeySet> {
  const keys = await Promise.all(jwks.map(fromJwk));
  const active = keys[0];
  if (!active?.privateKey) throw new Error('the first JWT signing key must include its private part (d)');
  return { active: { ...active, privateKey: active.privateKey }, byKid: new Map(keys.map((k) => [k.kid, k])) };
}

/** A new private Ed25519 JWK with its thumbprint as `kid`. */
export async function generateSigningJwk(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(accessTokenAlgorithm, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint({ kty: 'OKP', crv: 'Ed25519', x: jwk.x as string }, 'sha256');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x, d: jwk.d, kid, alg: accessTokenAlgorithm, use: 'sig' };
}

/** An in-memory key set (tests, or a process that must not touch disk). */
export async function generateSigningKeySet(): Promise<SigningKeySet> {
  return signingKeySetFromJwks([await generateSigningJwk()]);
}

/**
 * The signing keys in `file` (`{"keys":[JWK, ...]}`, first = signer), created with mode 0600 on
 * first start and reused after. Instances that share a DATA_DIR race safely (the first file
 * linked into place wins). Rotation: put a new key first and keep the old one
 * after it (without `d`) until tokens signed with it have expired.
 */
export async function loadOrCreateSigningKeys(file: string): Promise<SigningKeySet> {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
    const content: KeyFile = { keys: [await generateSigningJwk()] };
    // Written whole under a private name, then linked into place: link() fails if the file exists,
    // so a reader never sees a half-written key and the first of two racing instances wins.
    const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(draft, `${JSON.stringify(content, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(draft, file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    } finally {
      unlinkSync(draft);
    }
  }
  let parsed: KeyFile;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as KeyFile;
  } catch (error) {
    throw new Error(`cannot read JWT signing keys from ${file}`, { cause: error });
  }
  if (!Array.isArray(parsed.keys)) throw new Error(`${file} must hold {"keys": [JWK, ...]}`);
  return signingKeySetFromJwks(parsed.keys);
}
