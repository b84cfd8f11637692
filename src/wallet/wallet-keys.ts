import { bytesToHex, type Address, type Hex, type LocalAccount } from 'viem';
import type { KeyVault } from '#shared/key-vault.ts';
import { DomainError } from '#shared/errors.ts';
import { localAccount } from '../chain/local-account.ts';
import type { TokenWrappedKeys } from '../chain/token-wrapped-keys.ts';

/** Where the custodial wallets' private keys are kept: how one is stored, and an account that signs with it. */
export interface WalletKeys {
  /** The stored form (`accounts.private_key_enc`) of a new wallet's key. */
  seal(privateKey: Uint8Array): Promise<string>;
  /** The wallet `address`'s account over its stored key. */
  account(sealed: string, address: Address): LocalAccount;
}

/**
 * File custody: keys sealed with the master key (AES-256-GCM), opened in the process to sign. With an
 * HSM token (KEY_CUSTODY=pkcs11) new keys are wrapped by the token and sign there; keys sealed with the
 * master key before the switch keep signing as they are.
 */
export function walletKeys(vault: KeyVault, token?: TokenWrappedKeys): WalletKeys {
  return {
    seal: async (privateKey) => (token ? token.wrap(privateKey) : vault.encrypt(bytesToHex(privateKey))),
    account(sealed, address) {
      if (sealed.startsWith('p11:')) {
        if (!token) throw new DomainError('custody.unavailable', 'this wallet\'s key is wrapped by an HSM token: start the platform with KEY_CUSTODY=pkcs11');
        return token.account(sealed, address);
      }
      return localAccount(vault.decrypt(sealed) as Hex);
    },
  };
}

/** The wallet keys of `deps`: its own, else the master key's (file custody). */
export const keysOf = (deps: { vault: KeyVault; keys?: WalletKeys | undefined }): WalletKeys => deps.keys ?? walletKeys(deps.vault);
