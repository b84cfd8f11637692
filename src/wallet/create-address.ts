import { randomBytes } from 'node:crypto';
import type { Address } from 'viem';
import { english, generateMnemonic, mnemonicToAccount } from 'viem/accounts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';

export interface CreateAddressReturnType {
  address: Address;
  mnemonic: string;
  secretKey: string;
}

/**
 * Creates a custodial account: a 12-word BIP-39 mnemonic, the key at m/44'/60'/0'/0/0 and a random
 * secretKey. The private key is stored sealed (master key, or wrapped by the HSM token), the secretKey
 * encrypted; the mnemonic is not stored.
 */
export async function createAddress(deps: Pick<WalletDeps, 'repo' | 'vault' | 'keys' | 'clock'>): Promise<CreateAddressReturnType> {
  const mnemonic = generateMnemonic(english);
  const account = mnemonicToAccount(mnemonic);
  const privateKey = account.getHdKey().privateKey;
  // Stryker disable next-line StringLiteral: unreachable, a key derived from a seed always has its private key (the message of a throw no input reaches)
  if (!privateKey) throw new Error('derived key has no private key');
  const secretKey = randomBytes(32).toString('hex');
  await deps.repo.insertAccount({
    address: account.address,
    privateKeyEnc: await keysOf(deps).seal(privateKey),
    secretKeyEnc: deps.vault.encrypt(secretKey),
  }, deps.clock());
  return { address: account.address, mnemonic, secretKey };
}
