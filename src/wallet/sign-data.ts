import type { Hex } from 'viem';
import { DomainError } from '#shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';
import { checkTempKey, type KeyType } from './temp-key.ts';

export interface SignDataParameters {
  address: string;
  tempKey: string;
  hashKey: string;
  /** The sha256 hex string to sign (docs/interfaces.md#key-scheme: the hash of `from|to|amount|tempKey|hashKey`). */
  data: string;
  keyType?: KeyType;
}

/**
 * Signs `data` with the account key, EIP-191 (personal_sign) over the hex string as text, so
 * any Ethereum tool verifies it. Needs a live temp key and its hashKey; does not consume the key.
 */
export async function signData(
  deps: Pick<WalletDeps, 'repo' | 'vault' | 'keys' | 'clock'>,
  params: SignDataParameters,
): Promise<{ signature: Hex }> {
  if (!/^[0-9a-f]{64}$/.test(params.data)) {
    throw new DomainError('request.invalid', 'data must be a lower-case sha256 hex string (64 characters)', { details: 'data' });
  }
  const key = await checkTempKey(deps, { ...params, keyType: params.keyType ?? 'transfer' });
  const account = keysOf(deps).account(key.privateKeyEnc, key.address);
  return { signature: await account.signMessage({ message: params.data }) };
}
