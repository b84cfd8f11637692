import { createRequire } from 'node:module';
import {
  bytesToHex, getAddress, hashMessage, hashTypedData, hexToBytes, keccak256, serializeSignature, serializeTransaction,
  type Address, type Hex, type LocalAccount,
} from 'viem';
import { publicKeyToAddress, toAccount } from 'viem/accounts';
import type * as Secp256k1 from 'secp256k1';

// libsecp256k1 through N-API (its prebuilt binary ships inside the npm package): signing and recovery
// cost a twentieth of the pure-JS curve's. The package's own entry falls back to a JS implementation
// silently; its `bindings` entry does not, so a missing binary fails at start, not slowly.
const secp256k1 = createRequire(import.meta.url)('secp256k1/bindings') as typeof Secp256k1;

/** The ECDSA signature of a 32-byte hash (RFC 6979 nonce, low s: the same bytes viem's own signer makes). */
function signHash(hash: Hex, privateKey: Uint8Array): { r: Hex; s: Hex; yParity: number; v: bigint } {
  const { signature, recid } = secp256k1.ecdsaSign(hexToBytes(hash), privateKey);
  return { r: bytesToHex(signature.subarray(0, 32)), s: bytesToHex(signature.subarray(32)), yParity: recid, v: 27n + BigInt(recid) };
}

/**
 * A viem local account over a private key, signing natively: a drop-in for `privateKeyToAccount`
 * (raw digests, messages per EIP-191, typed data per EIP-712, transactions), byte for byte the same signatures.
 */
export function localAccount(privateKey: Hex): LocalAccount & Required<Pick<LocalAccount, 'sign'>> {
  const key = hexToBytes(privateKey);
  const publicKey = bytesToHex(secp256k1.publicKeyCreate(key, false));
  const account = toAccount({
    address: publicKeyToAddress(publicKey),
    // A raw digest: what an EIP-7702 authorization signs (src/chain/account-transfer.ts, signDelegation).
    async sign({ hash }) {
      return serializeSignature(signHash(hash, key));
    },
    async signMessage({ message }) {
      return serializeSignature(signHash(hashMessage(message), key));
    },
    async signTypedData(typedData) {
      return serializeSignature(signHash(hashTypedData(typedData), key));
    },
    async signTransaction(transaction, options) {
      const serializer = options?.serializer ?? serializeTransaction;
      const signature = signHash(keccak256(await serializer(transaction)), key);
      return serializer(transaction, signature);
    },
  });
  return { ...account, sign: account.sign! };
}

/**
 * The address that signed `message` per EIP-191 with a 65-byte `signature` (v 27/28 or 0/1), or
 * undefined when it is no valid signature.
 */
export function recoverMessageSigner(message: string, signature: Hex): Address | undefined {
  const bytes = hexToBytes(signature);
  if (bytes.length !== 65) return undefined;
  const v = bytes[64]!;
  const recid = v >= 27 ? v - 27 : v;
  if (recid !== 0 && recid !== 1) return undefined;
  try {
    const publicKey = secp256k1.ecdsaRecover(bytes.subarray(0, 64), recid, hexToBytes(hashMessage(message)), false);
    return getAddress(publicKeyToAddress(bytesToHex(publicKey)));
  } catch {
    return undefined;
  }
}
