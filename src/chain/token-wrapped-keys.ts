import { createRequire } from 'node:module';
import {
  bytesToHex, getAddress, hashMessage, hashTypedData, keccak256, serializeSignature, serializeTransaction, type Address, type Hex,
  type LocalAccount,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';
import type * as Pkcs11js from 'pkcs11js';
import type { Pkcs11Token, TokenSession } from './pkcs11-token.ts';
import { lowSignature } from './token-account.ts';

const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;
/** DER of the named curve secp256k1 (OID 1.3.132.0.10). */
const secp256k1Params = Buffer.from('06052b8104000a', 'hex');
/** The stored form's prefix: `p11:v1:<wrapping key label>:<base64 of the wrapped PKCS#8 key>`. */
const prefix = 'p11:v1:';

/** The label of the AES key that wraps the wallets' keys (a new label per rotation). */
export const walletWrappingKeyLabel = 'vixpay-wallet-wrap-1';

export interface TokenWrappedKeys {
  /**
   * The stored form of a secp256k1 private key: wrapped in the token under its AES key
   * (CKM_AES_KEY_WRAP_PAD, RFC 5649) that never leaves it. The key passes through the token as a
   * session object, destroyed at once.
   */
  wrap(privateKey: Uint8Array): Promise<string>;
  /** Whether `sealed` is a key wrapped by a token (else another custody's form). */
  holds(sealed: string): boolean;
  /** An account signing with a wrapped key: each signature unwraps it inside the token as a session object, signs, destroys it. */
  account(sealed: string, address: Address): LocalAccount;
}

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
export function tokenWrappedKeys(token: Pkcs11Token): TokenWrappedKeys {
  const p = lib();
  let cached: { generation: number; handle: Buffer } | undefined;
  const wrappingKey = (session: TokenSession): Buffer => {
    if (cached?.generation === session.generation) return cached.handle;
    const label = walletWrappingKeyLabel;
    const handle = findOne(session, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_LABEL, value: label }])
      ?? session.p11.C_GenerateKey(session.handle, { mechanism: p.CKM_AES_KEY_GEN }, [
        { type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_AES }, { type: p.CKA_VALUE_LEN, value: 32 },
        { type: p.CKA_TOKEN, value: true }, { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true },
        { type: p.CKA_EXTRACTABLE, value: false }, { type: p.CKA_WRAP, value: true }, { type: p.CKA_UNWRAP, value: true },
        { type: p.CKA_ENCRYPT, value: false }, { type: p.CKA_DECRYPT, value: false }, { type: p.CKA_LABEL, value: label },
      ]);
    cached = { generation: session.generation, handle };
    return handle;
  };
  const wrapMechanism = () => ({ mechanism: p.CKM_AES_KEY_WRAP_PAD });

  /** The signature of `hash` by the wrapped key, unwrapped as a session object for this one signature. */
  const signHash = (wrapped: Buffer, address: Address, hash: Hex) => token.run(async (session) => {
    const { p11, handle } = session;
    const key = await p11.C_UnwrapKeyAsync(handle, wrapMechanism(), wrappingKey(session), wrapped, [
      { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: false },
      { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true }, { type: p.CKA_EXTRACTABLE, value: false },
      { type: p.CKA_SIGN, value: true },
    ]);
    try {
      const digest = Buffer.from(hash.slice(2), 'hex');
      p11.C_SignInit(handle, { mechanism: p.CKM_ECDSA }, key);
      const raw = await p11.C_SignAsync(handle, digest, Buffer.alloc(64));
      const signature = lowSignature(raw, digest, (publicKey) => getAddress(publicKeyToAddress(bytesToHex(publicKey))) === address);
      return { ...signature, v: 27n + BigInt(signature.yParity) };
    } finally {
      p11.C_DestroyObject(handle, key);
    }
  });

  return {
    async wrap(privateKey) {
      return token.run(async (session) => {
        const { p11, handle } = session;
        const key = p11.C_CreateObject(handle, [
          { type: p.CKA_CLASS, value: p.CKO_PRIVATE_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_EC }, { type: p.CKA_TOKEN, value: false },
          { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true }, { type: p.CKA_EXTRACTABLE, value: true },
          { type: p.CKA_SIGN, value: true }, { type: p.CKA_EC_PARAMS, value: secp256k1Params }, { type: p.CKA_VALUE, value: Buffer.from(privateKey) },
        ]);
        try {
          const wrapped = p11.C_WrapKey(handle, wrapMechanism(), wrappingKey(session), key, Buffer.alloc(512));
          return `${prefix}${walletWrappingKeyLabel}:${wrapped.toString('base64')}`;
        } finally {
          p11.C_DestroyObject(handle, key);
        }
      });
    },
    holds: (sealed) => sealed.startsWith(prefix),
    account(sealed, address) {
      const [label, blob] = sealed.slice(prefix.length).split(':');
      if (label !== walletWrappingKeyLabel || !blob) throw new Error(`a wallet key wrapped by an unknown key "${label}"`);
      const wrapped = Buffer.from(blob, 'base64');
      const checked = getAddress(address);
      return toAccount({
        address: checked,
        async signMessage({ message }) {
          return serializeSignature(await signHash(wrapped, checked, hashMessage(message)));
        },
        async signTypedData(typedData) {
          return serializeSignature(await signHash(wrapped, checked, hashTypedData(typedData)));
        },
        async signTransaction(transaction, options) {
          const serializer = options?.serializer ?? serializeTransaction;
          return serializer(transaction, await signHash(wrapped, checked, keccak256(await serializer(transaction))));
        },
      });
    },
  };
}
