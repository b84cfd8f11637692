import { createRequire } from 'node:module';
import {
  bytesToHex, getAddress, hashMessage, hashTypedData, hexToBytes, keccak256, recoverMessageAddress, serializeSignature, serializeTransaction,
  type Address, type Hex, type LocalAccount,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';
import type * as Secp256k1 from 'secp256k1';
import type * as Pkcs11js from 'pkcs11js';
import type { Pkcs11Token, TokenSession } from './pkcs11-token.ts';

const secp256k1 = createRequire(import.meta.url)('secp256k1/bindings') as typeof Secp256k1;
const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;

/** The curve's order n: an s above n/2 is replaced by n - s (EIP-2: the chain refuses high s). */
const curveOrder = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const halfOrder = curveOrder / 2n;
/** DER of the named curve secp256k1 (OID 1.3.132.0.10): CKA_EC_PARAMS. */
const secp256k1Params = Buffer.from('06052b8104000a', 'hex');

const toBigInt = (bytes: Uint8Array) => BigInt(bytesToHex(bytes));
const to32 = (value: bigint) => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');

/**
 * A token's raw ECDSA signature (r || s) of a 32-byte digest as Ethereum wants it: s made low, and the
 * recovery id (yParity) the token does not give found by recovering the public key with each.
 */
export function ethereumSignature(raw: Uint8Array, digest: Uint8Array, publicKey: Uint8Array): { r: Hex; s: Hex; yParity: number } {
  return lowSignature(raw, digest, (recovered) => Buffer.compare(Buffer.from(recovered), Buffer.from(publicKey)) === 0);
}

/** As ethereumSignature, the signer known by a test of the recovered public key (e.g. its address). */
export function lowSignature(raw: Uint8Array, digest: Uint8Array, isSigner: (publicKey: Uint8Array) => boolean): { r: Hex; s: Hex; yParity: number } {
  if (raw.length !== 64) throw new Error(`the token's ECDSA signature has ${raw.length} bytes, not 64`);
  const r = raw.subarray(0, 32);
  const s = toBigInt(raw.subarray(32));
  const compact = Buffer.concat([r, to32(s > halfOrder ? curveOrder - s : s)]);
  for (const recid of [0, 1]) {
    let recovered: Uint8Array;
    try {
      recovered = secp256k1.ecdsaRecover(compact, recid, digest, false);
    } catch {
      continue;
    }
    if (isSigner(recovered)) {
      return { r: bytesToHex(r), s: bytesToHex(compact.subarray(32)), yParity: recid };
    }
  }
  throw new Error('the token\'s signature does not recover to its key');
}

/** One secp256k1 key pair in the token, by label: the private key's handle is found again after a reconnection. */
interface TokenKey {
  label: string;
  /** Uncompressed (65 bytes, 0x04 || x || y). */
  publicKey: Uint8Array;
}

function findObjects(session: TokenSession, template: Pkcs11js.Template): Buffer[] {
  const { p11, handle } = session;
  p11.C_FindObjectsInit(handle, template);
  try {
    return p11.C_FindObjects(handle, 16);
  } finally {
    p11.C_FindObjectsFinal(handle);
  }
}

function keyTemplate(label: string, objectClass: number): Pkcs11js.Template {
  const p = lib();
  return [{ type: p.CKA_CLASS, value: objectClass }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_LABEL, value: label }];
}

/** The EC point of a public key object, unwrapped from its DER OCTET STRING (some tokens give it bare). */
function ecPoint(session: TokenSession, publicKey: Buffer): Uint8Array {
  const p = lib();
  const [attribute] = session.p11.C_GetAttributeValue(session.handle, publicKey, [{ type: p.CKA_EC_POINT }]);
  const value = attribute?.value as Buffer | undefined;
  if (value?.length === 67 && value[0] === 0x04 && value[1] === 0x41) return value.subarray(2);
  if (value?.length === 65 && value[0] === 0x04) return value;
  throw new Error('the token\'s public key is not an uncompressed secp256k1 point');
}

/**
 * The key pair labelled `label`, generated inside the token when it has none: the private key is
 * sensitive and not extractable (it never leaves the token), a token object (it outlives the session).
 */
function findOrGenerateKey(session: TokenSession, label: string): TokenKey {
  const p = lib();
  const privateKeys = findObjects(session, keyTemplate(label, p.CKO_PRIVATE_KEY));
  const publicKeys = findObjects(session, keyTemplate(label, p.CKO_PUBLIC_KEY));
  if (privateKeys.length > 1 || publicKeys.length > 1) {
    throw new Error(`the token holds ${privateKeys.length} private and ${publicKeys.length} public keys labelled "${label}": keep one pair`);
  }
  if (privateKeys.length === 1 && publicKeys.length === 1) return { label, publicKey: ecPoint(session, publicKeys[0]!) };
  if (privateKeys.length === 1) throw new Error(`the token holds the private key "${label}" without its public key`);
  const id = Buffer.from(label);
  const pair = session.p11.C_GenerateKeyPair(session.handle, { mechanism: p.CKM_EC_KEY_PAIR_GEN }, [
    { type: p.CKA_TOKEN, value: true }, { type: p.CKA_PRIVATE, value: false }, { type: p.CKA_VERIFY, value: true },
    { type: p.CKA_EC_PARAMS, value: secp256k1Params }, { type: p.CKA_LABEL, value: label }, { type: p.CKA_ID, value: id },
  ], [
    { type: p.CKA_TOKEN, value: true }, { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true },
    { type: p.CKA_EXTRACTABLE, value: false }, { type: p.CKA_SIGN, value: true }, { type: p.CKA_DERIVE, value: false },
    { type: p.CKA_LABEL, value: label }, { type: p.CKA_ID, value: id },
  ]);
  return { label, publicKey: ecPoint(session, pair.publicKey) };
}

/** A viem account whose every signature is made by the token with the key (CKM_ECDSA over the keccak digest). */
function tokenAccount(token: Pkcs11Token, key: TokenKey): LocalAccount {
  const p = lib();
  // The private key's handle per connection (a reconnection may number objects anew).
  let cached: { generation: number; handle: Buffer } | undefined;
  const privateKey = (session: TokenSession): Buffer => {
    if (cached?.generation === session.generation) return cached.handle;
    const [handle, ...more] = findObjects(session, keyTemplate(key.label, p.CKO_PRIVATE_KEY));
    if (!handle || more.length > 0) throw new Error(`the token holds ${more.length + (handle ? 1 : 0)} private keys labelled "${key.label}"`);
    cached = { generation: session.generation, handle };
    return handle;
  };
  const signHash = (hash: Hex) => token.run(async (session) => {
    const digest = Buffer.from(hash.slice(2), 'hex');
    session.p11.C_SignInit(session.handle, { mechanism: p.CKM_ECDSA }, privateKey(session));
    const raw = await session.p11.C_SignAsync(session.handle, digest, Buffer.alloc(64));
    const signature = ethereumSignature(raw, digest, key.publicKey);
    return { ...signature, v: 27n + BigInt(signature.yParity) };
  });
  return toAccount({
    address: publicKeyToAddress(bytesToHex(key.publicKey)),
    async sign({ hash }) {
      return serializeSignature(await signHash(hash));
    },
    async signMessage({ message }) {
      return serializeSignature(await signHash(hashMessage(message)));
    },
    async signTypedData(typedData) {
      return serializeSignature(await signHash(hashTypedData(typedData)));
    },
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      return serializer(transaction, await signHash(keccak256(await serializer(transaction))));
    },
  });
}

/** The label of lane `i`'s key pair in the token. */
export const laneKeyLabel = (i: number) => `vixpay-relayer-lane-${i}`;

/**
 * The relayer's lanes with `KEY_CUSTODY=pkcs11`: `count` secp256k1 keys in the token, lane 0 the
 * platform account, each generated there at first use and found by its label afterwards.
 */
export async function loadTokenLanes(token: Pkcs11Token, count: number): Promise<LocalAccount[]> {
  const keys = await token.run(async (session) => Array.from({ length: count }, (_, i) => findOrGenerateKey(session, laneKeyLabel(i))));
  return keys.map((key) => tokenAccount(token, key));
}

/**
 * `keys migrate --to pkcs11`: the lanes of a platform that ran with file custody put into the token
 * under the lanes' labels, so the treasury, the contracts' owner and the lanes' nonces stay the
 * platform's: each private key a token object, sensitive and not extractable from then on, with its
 * public key beside it. A lane already in the token must be the same key (a run taken up again);
 * another key there is refused. Each lane then signs a message in the token, which must recover to its
 * address. Answers the lanes' addresses.
 */
export async function importTokenLanes(token: Pkcs11Token, privateKeys: readonly Hex[]): Promise<Address[]> {
  const p = lib();
  const expected = privateKeys.map((key) => getAddress(publicKeyToAddress(bytesToHex(secp256k1.publicKeyCreate(hexToBytes(key), false)))));
  await token.run(async (session) => {
    for (const [i, key] of privateKeys.entries()) {
      const label = laneKeyLabel(i);
      const id = Buffer.from(label);
      const publicKey = Buffer.from(secp256k1.publicKeyCreate(hexToBytes(key), false));
      const privates = findObjects(session, keyTemplate(label, p.CKO_PRIVATE_KEY));
      const publics = findObjects(session, keyTemplate(label, p.CKO_PUBLIC_KEY));
      if (publics.length === 1 && Buffer.compare(Buffer.from(ecPoint(session, publics[0]!)), publicKey) !== 0) {
        throw new Error(`the token holds another key as ${label} (${getAddress(publicKeyToAddress(bytesToHex(ecPoint(session, publics[0]!))))}, not ${expected[i]}): a token of another platform?`);
      }
      if (privates.length > 1 || publics.length > 1) throw new Error(`the token holds ${privates.length} private and ${publics.length} public keys labelled "${label}": keep one pair`);
      // The private key first: a run stopped between the two finds it and adds the public key (checked by the signature below).
      if (privates.length === 0) {
        session.p11.C_CreateObject(session.handle, [
          { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: true },
          { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true }, { type: p.CKA_EXTRACTABLE, value: false },
          { type: p.CKA_SIGN, value: true }, { type: p.CKA_DERIVE, value: false }, { type: p.CKA_EC_PARAMS, value: secp256k1Params },
          { type: p.CKA_VALUE, value: Buffer.from(hexToBytes(key)) }, { type: p.CKA_LABEL, value: label }, { type: p.CKA_ID, value: id },
        ]);
      }
      if (publics.length === 0) {
        session.p11.C_CreateObject(session.handle, [
          { type: p.CKA_CLASS, value: p.CKO_PUBLIC_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: true },
          { type: p.CKA_PRIVATE, value: false }, { type: p.CKA_VERIFY, value: true }, { type: p.CKA_EC_PARAMS, value: secp256k1Params },
          // DER OCTET STRING of the uncompressed point, as tokens give it (ecPoint reads both forms).
          { type: p.CKA_EC_POINT, value: Buffer.concat([Buffer.from([0x04, 0x41]), publicKey]) }, { type: p.CKA_LABEL, value: label }, { type: p.CKA_ID, value: id },
        ]);
      }
    }
  });
  const lanes = await loadTokenLanes(token, privateKeys.length);
  for (const [i, lane] of lanes.entries()) {
    const message = `vixpay keys migrate: relayer lane ${i} ${expected[i]} in the token`;
    const signer = await recoverMessageAddress({ message, signature: await lane.signMessage({ message }) });
    if (signer !== expected[i] || lane.address !== expected[i]) throw new Error(`relayer lane ${i} in the token signs as ${signer}, not ${expected[i]}`);
  }
  return expected;
}
