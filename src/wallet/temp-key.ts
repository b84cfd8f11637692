import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { DomainError } from '#shared/errors.ts';
import { safeEqual, sha256Hex } from '#shared/hash.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { parseAddress } from './address.ts';

/**
 * What a temp key may be spent on. `transfer` is docs/interfaces.md#key-scheme's: a transfer or a createToken (docs/interfaces.md#key-scheme
 * names no other value). `createToken` is ours: a createToken only, never a transfer.
 */
export const keyTypes = ['transfer', 'createToken'] as const;
export type KeyType = (typeof keyTypes)[number];

export interface IssueTempKeyParameters {
  address: string;
  keyType: KeyType;
}

/** Issues a random, single-use temp key bound to (address, keyType). Only its hash is stored. */
export async function issueTempKey(
  deps: Pick<WalletDeps, 'repo' | 'clock' | 'tempKeyTtlMs'>,
  params: IssueTempKeyParameters,
): Promise<{ tempKey: string; expiresAt: number }> {
  const address = parseAddress(params.address, 'address');
  const tempKey = randomBytes(32).toString('hex');
  const now = deps.clock();
  const expiresAt = now + deps.tempKeyTtlMs;
  // The account check and the insert are one statement: a lookup first would wait for the disk too.
  if (!(await deps.repo.insertTempKeyForAccount({ keyHash: sha256Hex(tempKey), address, keyType: params.keyType, expiresAt }, now))) {
    throw new DomainError('wallet.unknown_address', 'no wallet account with this address');
  }
  return { tempKey, expiresAt };
}

export interface AuthorizedKey {
  address: Address;
  /** sha256 of the temp key: its id in the store, and the EIP-3009 authorization nonce. */
  keyHash: string;
  privateKeyEnc: string;
}

/**
 * Checks docs/interfaces.md#key-scheme's scheme: the temp key is live, unused and bound to this address and to the key
 * type (or one of the key types) the call accepts, and hashKey = sha256hex(tempKey + "|" + secretKey).
 * Does not consume the key.
 */
export async function checkTempKey(
  deps: Pick<WalletDeps, 'repo' | 'vault' | 'clock'>,
  params: { address: string; keyType: KeyType | readonly KeyType[]; tempKey: string; hashKey: string },
): Promise<AuthorizedKey> {
  const address = parseAddress(params.address, 'address');
  const keyHash = sha256Hex(params.tempKey);
  const record = await deps.repo.findTempKey(keyHash);
  const accepted: readonly string[] = typeof params.keyType === 'string' ? [params.keyType] : params.keyType;
  if (!record || record.address !== address || !accepted.includes(record.keyType)) {
    throw new DomainError('wallet.temp_key_invalid', 'tempKey is unknown or not issued for this address and keyType');
  }
  if (record.usedAt !== null) throw new DomainError('wallet.temp_key_invalid', 'tempKey was already used');
  if (record.expiresAt <= deps.clock()) throw new DomainError('wallet.temp_key_invalid', 'tempKey has expired');
  const account = await deps.repo.findAccount(address);
  if (!account) throw new DomainError('wallet.unknown_address', 'no wallet account with this address');
  const expected = sha256Hex(`${params.tempKey}|${deps.vault.decrypt(account.secretKeyEnc)}`);
  if (!safeEqual(expected, params.hashKey.toLowerCase())) throw new DomainError('wallet.hash_key_invalid', 'hashKey does not match');
  return { address, keyHash, privateKeyEnc: account.privateKeyEnc };
}

/**
 * Uses up a temp key before what it authorises is signed, so a replay racing this one is refused
 * and nothing is signed or sent for it. (A transfer uses its key up in the reservation of its funds.)
 */
export async function consumeTempKey(deps: Pick<WalletDeps, 'repo' | 'clock'>, keyHash: string): Promise<void> {
  if (!(await deps.repo.consumeTempKey(keyHash, deps.clock()))) {
    throw new DomainError('wallet.temp_key_invalid', 'tempKey was already used');
  }
}
