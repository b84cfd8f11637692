import { createRequire } from 'node:module';
import {
  bytesToHex, getAddress, hashMessage, hashTypedData, keccak256, serializeSignature, serializeTransaction, type Address, type Hex,
  type LocalAccount,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';
import type * as Pkcs11js from 'pkcs11js';
import type { Pkcs11Token, TokenSession } from './pkcs11-token.ts';
import { lowSignature } from './token-account.ts';
import { unwrappedKeys } from './token-unwrapped-keys.ts';

const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
/** DER of the named curve secp256k1 (OID 1.3.132.0.10). */
const secp256k1Params = Buffer.from('06052b8104000a', 'hex');
/** The stored form's prefix: `p11:v1:<wrapping key label>:<base64 of the wrapped PKCS#8 key>`. */
const prefix = 'p11:v1:';

/** The label of the first AES key that wraps the wallets' keys; each rotation adds one, numbered on (`vixpay-wallet-wrap-2`...). */
export const walletWrappingKeyLabel = 'vixpay-wallet-wrap-1';
const labelPattern = /^vixpay-wallet-wrap-([1-9][0-9]*)$/;
const labelNumber = (label: string): number => Number(labelPattern.exec(label)?.[1] ?? 0);

export interface TokenWrappedKeys {
  /**
   * The stored form of a secp256k1 private key: wrapped in the token under its AES key
   * (CKM_AES_KEY_WRAP_PAD, RFC 5649) that never leaves it. The key passes through the token as a
   * session object, destroyed at once.
   */
  wrap(privateKey: Uint8Array, label?: string): Promise<string>;
  /**
   * `sealed` wrapped again under the wrapping key `label`: unwrapped inside the token as a session
   * object under its own wrapping key, wrapped under the other, destroyed: the key never leaves the token.
   */
  rewrap(sealed: string, label: string): Promise<string>;
  /** The label of the wrapping key new keys are wrapped under: the newest in the token (the first is generated when there is none). */
  currentWrappingKey(): Promise<string>;
  /** A new wrapping key generated in the token, numbered after the newest: new keys are wrapped under it from now on. */
  newWrappingKey(): Promise<string>;
  /** The label of the wrapping key of a stored form. */
  wrappedBy(sealed: string): string | undefined;
  /** Whether `sealed` is a key wrapped by a token (else another custody's form). */
  holds(sealed: string): boolean;
  /**
   * An account signing with a wrapped key: unwrapped inside the token as a session object (sensitive,
   * not extractable) for its first signature and kept there for the next ones, among the `unwrappedKeys`
   * used last (TokenWrappedKeysOptions); the platform holds the object's handle, never the key.
   */
  account(sealed: string, address: Address): LocalAccount;
}

export interface TokenWrappedKeysOptions {
  /**
   * Keys kept unwrapped in the token after their signature (PKCS11_UNWRAPPED_KEYS): beyond it the least
   * recently used is destroyed (once no signature uses it); 0 destroys each after its signature.
   * Every one goes with the connection (the token closes a session's objects with it).
   */
  unwrappedKeys?: number;
}

/** Default of PKCS11_UNWRAPPED_KEYS (src/config/schema.ts). */
const defaultUnwrappedKeys = 256;

function findOne(session: TokenSession, template: Pkcs11js.Template): Buffer | undefined {
  const { p11, handle } = session;
  p11.C_FindObjectsInit(handle, template);
  try {
    const found = p11.C_FindObjects(handle, 2);
    if (found.length > 1) throw new Error('the token holds two keys of one label');
    return found[0];
  } finally {
    p11.C_FindObjectsFinal(handle);
  }
}

/** The wallets' keys wrapped by an AES-256 key of the token, generated there (not extractable) at first use. */
export function tokenWrappedKeys(token: Pkcs11Token, options: TokenWrappedKeysOptions = {}): TokenWrappedKeys {
  const p = lib();
  const keep = options.unwrappedKeys ?? defaultUnwrappedKeys;
  /** Wrapping keys' handles by label, valid for one connection (generation). */
  let cached: { generation: number; handles: Map<string, Buffer> } = { generation: -1, handles: new Map() };
  const generate = (session: TokenSession, label: string): Buffer => session.p11.C_GenerateKey(session.handle, { mechanism: p.CKM_AES_KEY_GEN }, [
    { type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_AES }, { type: p.CKA_VALUE_LEN, value: 32 },
    { type: p.CKA_TOKEN, value: true }, { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true },
    { type: p.CKA_EXTRACTABLE, value: false }, { type: p.CKA_WRAP, value: true }, { type: p.CKA_UNWRAP, value: true },
    { type: p.CKA_ENCRYPT, value: false }, { type: p.CKA_DECRYPT, value: false }, { type: p.CKA_LABEL, value: label },
  ]);
  /** The wrapping key `label`; the first one is generated at first use. */
  const wrappingKey = (session: TokenSession, label: string): Buffer => {
    if (cached.generation !== session.generation) cached = { generation: session.generation, handles: new Map() };
    const known = cached.handles.get(label);
    if (known) return known;
    const handle = findOne(session, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_LABEL, value: label }])
      ?? (label === walletWrappingKeyLabel ? generate(session, label) : undefined);
    if (!handle) throw new Error(`the token holds no wallet wrapping key "${label}"`);
    cached.handles.set(label, handle);
    return handle;
  };
  /** The newest wrapping key's label in the token (looked up each time: another process may have rotated). */
  const newestLabel = (session: TokenSession): string | undefined => {
    const { p11, handle } = session;
    p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_AES }]);
    let objects: Buffer[];
    try { objects = p11.C_FindObjects(handle, 1000); } finally { p11.C_FindObjectsFinal(handle); }
    const labels = objects.map((object) => p11.C_GetAttributeValue(handle, object, [{ type: p.CKA_LABEL }])[0]!.value!.toString('utf8'));
    return labels.filter((label) => labelPattern.test(label)).sort((a, b) => labelNumber(b) - labelNumber(a))[0];
  };
  const unwrapTemplate = (extractable: boolean): Pkcs11js.Template => [
    { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: false },
    { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true }, { type: p.CKA_EXTRACTABLE, value: extractable },
    { type: p.CKA_SIGN, value: true },
  ];
  const parse = (sealed: string): { label: string; wrapped: Buffer } => {
    const [label, blob] = sealed.slice(prefix.length).split(':');
    if (!sealed.startsWith(prefix) || !label || !labelPattern.test(label) || !blob) throw new Error('not a wallet key wrapped by a token');
    return { label, wrapped: Buffer.from(blob, 'base64') };
  };
  const wrapMechanism = () => ({ mechanism: p.CKM_AES_KEY_WRAP_PAD });

  const unwrapped = unwrappedKeys(keep, (session, label, wrapped) =>
    session.p11.C_UnwrapKeyAsync(session.handle, wrapMechanism(), wrappingKey(session, label), wrapped, unwrapTemplate(false)));

  /** The signature of `hash` by the wrapped key, unwrapped in the token (or kept there from an earlier signature). */
  const signHash = (sealed: string, label: string, wrapped: Buffer, address: Address, hash: Hex) => token.run(async (session) => {
    const { p11, handle } = session;
    const entry = unwrapped.acquire(session, sealed, label, wrapped);
    try {
      const key = await entry.handle;
      const digest = Buffer.from(hash.slice(2), 'hex');
      p11.C_SignInit(handle, { mechanism: p.CKM_ECDSA }, key);
      const raw = await p11.C_SignAsync(handle, digest, Buffer.alloc(64));
      const known = entry.signer?.address === address ? entry.signer.publicKey : undefined;
      const signature = lowSignature(raw, digest, (publicKey) => {
        if (known) return Buffer.compare(publicKey, known) === 0;
        if (getAddress(publicKeyToAddress(bytesToHex(publicKey))) !== address) return false;
        entry.signer = { address, publicKey };
        return true;
      });
      return { ...signature, v: 27n + BigInt(signature.yParity) };
    } catch (error) {
      // A handle the token does not know any more (an HSM that lost its session objects): unwrapped anew next time.
      if (error instanceof Error && /^CKR_(KEY|OBJECT)_HANDLE_INVALID/.test(error.message)) unwrapped.forget(sealed, entry);
      throw error;
    } finally {
      unwrapped.release(session, entry);
    }
  });

  return {
    async wrap(privateKey, chosen) {
      return token.run(async (session) => {
        const { p11, handle } = session;
        const label = chosen ?? newestLabel(session) ?? walletWrappingKeyLabel;
        const key = p11.C_CreateObject(handle, [
          { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: false },
          { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true }, { type: p.CKA_EXTRACTABLE, value: true },
          { type: p.CKA_SIGN, value: true }, { type: p.CKA_EC_PARAMS, value: secp256k1Params }, { type: p.CKA_VALUE, value: Buffer.from(privateKey) },
        ]);
        try {
          const wrapped = p11.C_WrapKey(handle, wrapMechanism(), wrappingKey(session, label), key, Buffer.alloc(512));
          return `${prefix}${label}:${wrapped.toString('base64')}`;
        } finally {
          p11.C_DestroyObject(handle, key);
        }
      });
    },
    async rewrap(sealed, label) {
      const from = parse(sealed);
      return token.run(async (session) => {
        const { p11, handle } = session;
        const key = await p11.C_UnwrapKeyAsync(handle, wrapMechanism(), wrappingKey(session, from.label), from.wrapped, unwrapTemplate(true));
        try {
          const wrapped = p11.C_WrapKey(handle, wrapMechanism(), wrappingKey(session, label), key, Buffer.alloc(512));
          return `${prefix}${label}:${wrapped.toString('base64')}`;
        } finally {
          p11.C_DestroyObject(handle, key);
        }
      });
    },
    currentWrappingKey: () => token.run(async (session) => {
      const label = newestLabel(session) ?? walletWrappingKeyLabel;
      wrappingKey(session, label);
      return label;
    }),
    newWrappingKey: () => token.run(async (session) => {
      const label = `vixpay-wallet-wrap-${labelNumber(newestLabel(session) ?? 'none') + 1}`;
      if (cached.generation !== session.generation) cached = { generation: session.generation, handles: new Map() };
      cached.handles.set(label, generate(session, label));
      return label;
    }),
    wrappedBy: (sealed) => (sealed.startsWith(prefix) ? sealed.slice(prefix.length).split(':')[0] : undefined),
    holds: (sealed) => sealed.startsWith(prefix),
    account(sealed, address) {
      const { label, wrapped } = parse(sealed);
      const checked = getAddress(address);
      return toAccount({
        address: checked,
        /** A raw digest (a JWT's ES256K over sha256, for a DID over the wallet). */
        async sign({ hash }) {
          return serializeSignature(await signHash(sealed, label, wrapped, checked, hash));
        },
        async signMessage({ message }) {
          return serializeSignature(await signHash(sealed, label, wrapped, checked, hashMessage(message)));
        },
        async signTypedData(typedData) {
          return serializeSignature(await signHash(sealed, label, wrapped, checked, hashTypedData(typedData)));
        },
        async signTransaction(transaction, options) {
          const serializer = options?.serializer ?? serializeTransaction;
          return serializer(transaction, await signHash(sealed, label, wrapped, checked, keccak256(await serializer(transaction))));
        },
      });
    },
  };
}
