import type { Address, Hex } from 'viem';
import { recoverMessageSigner } from '../chain/local-account.ts';
import { DomainError } from '#shared/errors.ts';
import { sha256Hex } from '#shared/hash.ts';

/**
 * The message a transaction-creating call must carry a signature for:
 * sha256hex(fields joined by "|"), fields exactly as sent, ending with tempKey and hashKey.
 */
export function signedMessage(fields: readonly string[]): string {
  return sha256Hex(fields.join('|'));
}

/** Throws `wallet.signature_invalid` unless `signature` is `address`'s EIP-191 signature of the message. */
export async function assertSignedBy(address: Address, fields: readonly string[], signature: string): Promise<void> {
  let valid = false;
  if (/^0x[0-9a-fA-F]{130}$/.test(signature)) {
    valid = recoverMessageSigner(signedMessage(fields), signature as Hex) === address;
  }
  if (!valid) throw new DomainError('wallet.signature_invalid', 'signature does not match the request');
}
