import { createHash, randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import type * as Pkcs11js from 'pkcs11js';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Pkcs11Token, TokenSession } from './pkcs11-token.ts';

const lib = () => createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11js;

/** The label of the token's key-encryption key (`KEY_CUSTODY=pkcs11`: what `DATA_DIR/master.key` is to file custody). */
export const secretsKeyLabel = 'vixpay-secrets-kek-1';
/** A sealed secret's form: `hsm:v1:<key label>:<iv, base64>:<ciphertext and GCM tag, base64>`. */
export const tokenSealedPrefix = 'hsm:v1:';
const prefix = tokenSealedPrefix;
/** GCM's 96-bit IV, random per secret (the IV is not secret; only its reuse under one key would be a weakness). */
const ivBytes = 12;
const tagBits = 128;
/** The first byte of every sealed plaintext (then the secret's UTF-8). */
const textMark = Buffer.from([1]);

export interface TokenKeyVault extends KeyVault {
  /**
   * Finds the key-encryption key in the token, or generates it there (AES-256, sensitive, not
   * extractable, encrypt and decrypt only). Call once before the first seal, under the start-up lock
   * (two instances generating at once would make two keys of one label).
   */
  ready(): Promise<void>;
  /** The fleet's `master_key` fingerprint: sha256 of the key's random CKA_ID, which says nothing about the key. */
  fingerprint(): Promise<string>;
  /** Whether `sealed` was sealed by a token (else by the master key of file custody). */
  holds(sealed: string): boolean;
}

function findKey(session: TokenSession, label: string): Buffer | undefined {
  const p = lib();
  const { p11, handle } = session;
  p11.C_FindObjectsInit(handle, [{ type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_LABEL, value: label }]);
  try {
    const found = p11.C_FindObjects(handle, 2);
    if (found.length > 1) throw new Error(`the token holds two keys labelled "${label}": keep one`);
    return found[0];
  } finally {
    p11.C_FindObjectsFinal(handle);
  }
}

/**
 * The platform's secrets at rest (JWT signing keys, DID keys of the local KMS, wallets' secret keys,
 * webhook secrets) sealed with AES-256-GCM by a key generated in the HSM token and used there: each
 * seal and each opening is a `C_Encrypt` / `C_Decrypt` in the token, so the key is never in the process
 * nor in DATA_DIR. KeyVault is synchronous (its callers seal and open in line), so these calls run on
 * the token's session kept for them (`Pkcs11Token.runNow`, ~0.07 ms each on SoftHSM2); a lost token is
 * `custody.unavailable`, and the next call after it is back works again.
 */
export function tokenKeyVault(token: Pkcs11Token): TokenKeyVault {
  const p = lib();
  let cached: { generation: number; handle: Buffer } | undefined;
  const key = (session: TokenSession): Buffer => {
    if (cached?.generation === session.generation) return cached.handle;
    const handle = findKey(session, secretsKeyLabel);
    if (!handle) throw new Error(`the token holds no key-encryption key "${secretsKeyLabel}" (the platform makes it at its first start)`);
    cached = { generation: session.generation, handle };
    return handle;
  };
  const mechanism = (iv: Buffer): Pkcs11js.Mechanism => ({
    mechanism: p.CKM_AES_GCM, parameter: { type: p.CK_PARAMS_AES_GCM, iv, aad: Buffer.alloc(0), ivBits: ivBytes * 8, tagBits } as Pkcs11js.AesGCM,
  });
  const findOrGenerate = (session: TokenSession): Buffer => findKey(session, secretsKeyLabel)
    ?? session.p11.C_GenerateKey(session.handle, { mechanism: p.CKM_AES_KEY_GEN }, [
      { type: p.CKA_CLASS, value: p.CKO_SECRET_KEY }, { type: p.CKA_KEY_TYPE, value: p.CKK_AES }, { type: p.CKA_VALUE_LEN, value: 32 },
      { type: p.CKA_TOKEN, value: true }, { type: p.CKA_PRIVATE, value: true }, { type: p.CKA_SENSITIVE, value: true },
      { type: p.CKA_EXTRACTABLE, value: false }, { type: p.CKA_ENCRYPT, value: true }, { type: p.CKA_DECRYPT, value: true },
      { type: p.CKA_WRAP, value: false }, { type: p.CKA_UNWRAP, value: false }, { type: p.CKA_DERIVE, value: false },
      { type: p.CKA_LABEL, value: secretsKeyLabel }, { type: p.CKA_ID, value: randomBytes(16) },
    ]);

  return {
    ready: () => token.run(async (session) => { findOrGenerate(session); }),
    fingerprint: () => token.run(async (session) => {
      const handle = findOrGenerate(session);
      const id = session.p11.C_GetAttributeValue(session.handle, handle, [{ type: p.CKA_ID }])[0]?.value as Buffer | undefined;
      if (!id || id.length === 0) throw new Error(`the key-encryption key "${secretsKeyLabel}" has no CKA_ID`);
      return createHash('sha256').update(`vixpay pkcs11 key-encryption key ${id.toString('hex')}`).digest('hex');
    }),
    holds: (sealed) => sealed.startsWith(prefix),
    encrypt(plaintext) {
      const iv = randomBytes(ivBytes);
      // One byte before the text: SoftHSM2 refuses to encrypt nothing (CKR_ARGUMENTS_BAD), and an empty secret is one.
      const data = Buffer.concat([textMark, Buffer.from(plaintext, 'utf8')]);
      const body = token.runNow((session) => {
        session.p11.C_EncryptInit(session.handle, mechanism(iv), key(session));
        return session.p11.C_Encrypt(session.handle, data, Buffer.alloc(data.length + 32));
      });
      return `${prefix}${secretsKeyLabel}:${iv.toString('base64')}:${body.toString('base64')}`;
    },
    decrypt(sealed) {
      const [label, iv, body] = sealed.startsWith(prefix) ? sealed.slice(prefix.length).split(':') : [];
      if (label !== secretsKeyLabel || !iv || !body) throw new Error('unrecognised sealed secret (not sealed by the token\'s key-encryption key)');
      const data = Buffer.from(body, 'base64');
      const opened = token.runNow((session) => {
        session.p11.C_DecryptInit(session.handle, mechanism(Buffer.from(iv, 'base64')), key(session));
        return session.p11.C_Decrypt(session.handle, data, Buffer.alloc(data.length));
      });
      if (opened[0] !== textMark[0]) throw new Error('unrecognised sealed secret (its opened form has no text mark)');
      return opened.subarray(1).toString('utf8');
    },
  };
}
