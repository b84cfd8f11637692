import { randomBytes } from 'node:crypto';
import { validateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import type { Address } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';
import { DomainError } from '#shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';

export interface ImportAddressParameters {
  mnemonic: string;
}

export interface ImportAddressReturnType {
  address: Address;
  secretKey: string;
}

/**
 * Restores the account of a BIP-39 mnemonic (m/44'/60'/0'/0/0). Knowing the mnemonic proves
 * ownership, so an account we already hold answers with its secretKey; a new one is taken into
 * custody with a fresh secretKey.
 */
export async function importAddress(
  deps: Pick<WalletDeps, 'repo' | 'vault' | 'keys' | 'clock'>,
  params: ImportAddressParameters,
): Promise<ImportAddressReturnType> {
  const mnemonic = params.mnemonic.trim().toLowerCase().split(/\s+/).join(' ');
  if (!validateMnemonic(mnemonic, wordlist)) {
    throw new DomainError('wallet.invalid_mnemonic', 'mnemonic is not a valid English BIP-39 mnemonic');
  }
  const account = mnemonicToAccount(mnemonic);
  const existing = await deps.repo.findAccount(account.address);
  if (existing) return { address: account.address, secretKey: deps.vault.decrypt(existing.secretKeyEnc) };
  const privateKey = account.getHdKey().privateKey;
  // Stryker disable next-line StringLiteral: unreachable, a key derived from a seed always has its private key (the message of a throw no input reaches)
  if (!privateKey) throw new Error('derived key has no private key');
  const secretKey = randomBytes(32).toString('hex');
  const inserted = await deps.repo.insertAccount({
    address: account.address,
    privateKeyEnc: await keysOf(deps).seal(privateKey),
    secretKeyEnc: deps.vault.encrypt(secretKey),
  }, deps.clock());
  // Stryker disable next-line ConditionalExpression: `true` reads the account it just stored back, the same secretKey (equivalent); `false` (a race's loser answering a secretKey never stored) is also the BooleanLiteral mutant's, killed by the race test
  if (!inserted) return importAddress(deps, params); // lost a race with a concurrent import: answer with the stored key
  return { address: account.address, secretKey };
}
