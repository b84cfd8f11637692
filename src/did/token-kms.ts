import { AbstractKeyManagementSystem } from '@veramo/key-manager';
import type { IKey, ManagedKeyInfo, MinimalImportableKey } from '@veramo/core';
import {
  getAddress, hexToBytes, parseSignature, parseTransaction, sha256, type Address, type Hex, type LocalAccount, type TypedDataDefinition,
} from 'viem';
import { publicKeyToAddress } from 'viem/accounts';

/** Name of the key management system over the HSM token in the agent (`KEY_CUSTODY=pkcs11`). */
export const tokenKms = 'pkcs11';

/** The signing account of a wallet whose key is wrapped by the token, by address; undefined when there is none. */
export type TokenWalletAccount = (address: Address) => Promise<LocalAccount | undefined>;

const algorithms = ['ES256K', 'ES256K-R', 'eth_signTransaction', 'eth_signTypedData', 'eth_signMessage'];

/**
 * Veramo's key management system over the wallets' keys wrapped by the HSM token: a DID over such a
 * wallet signs in the token, and no private key enters Veramo's key store. A key here is the wallet's
 * public key only (kid: the uncompressed public key in hex, as the local KMS names keys); each
 * signature finds the wallet's stored form by its address (a migration or a rotation is followed).
 */
export class TokenKeyManagementSystem extends AbstractKeyManagementSystem {
  private readonly accountOf: TokenWalletAccount;

  constructor(accountOf: TokenWalletAccount) {
    super();
    this.accountOf = accountOf;
  }

  async importKey(args: Exclude<MinimalImportableKey, 'kms'>): Promise<ManagedKeyInfo> {
    if (args.type !== 'Secp256k1' || !args.publicKeyHex || args.privateKeyHex) {
      throw new Error('not_supported: the pkcs11 KMS takes a wallet\'s Secp256k1 public key only (its private key stays in the HSM)');
    }
    return { kid: args.kid ?? args.publicKeyHex, kms: tokenKms, type: 'Secp256k1', publicKeyHex: args.publicKeyHex, meta: { algorithms } };
  }

  /** None of its own: its keys are the wallets', listed by Veramo's key store. */
  async listKeys(): Promise<ManagedKeyInfo[]> {
    return [];
  }

  async createKey(): Promise<ManagedKeyInfo> {
    throw new Error('not_supported: a key of the pkcs11 KMS is a wallet\'s, imported by create-did');
  }

  /** Nothing of the key is kept here: the wallet keeps it. */
  async deleteKey(): Promise<boolean> {
    return true;
  }

  async sharedSecret(): Promise<string> {
    throw new Error('not_supported: the wallets\' keys in the token do not derive (no ECDH)');
  }

  async sign({ keyRef, algorithm, data }: { keyRef: Pick<IKey, 'kid'> & Partial<IKey>; algorithm?: string; data: Uint8Array }): Promise<string> {
    const publicKey = (keyRef.publicKeyHex ?? keyRef.kid).replace(/^0x/, '');
    const address = getAddress(publicKeyToAddress(`0x${publicKey}`));
    const account = await this.accountOf(address);
    if (!account?.sign) throw new Error(`key_not_found: no wallet ${address} with its key in the HSM`);
    if (algorithm === undefined || algorithm === 'ES256K' || algorithm === 'ES256K-R') {
      // did-jwt's ES256K: r ‖ s (s low) of sha256(data), base64url; ES256K-R adds the recovery byte.
      const { r, s, yParity } = parseSignature(await account.sign({ hash: sha256(data) }));
      const bytes = [...hexToBytes(r, { size: 32 }), ...hexToBytes(s, { size: 32 }), ...(algorithm === 'ES256K-R' ? [yParity ?? 0] : [])];
      return Buffer.from(bytes).toString('base64url');
    }
    if (algorithm === 'eth_signMessage') return account.signMessage({ message: { raw: data } });
    if (algorithm === 'eth_signTypedData' || algorithm === 'EthereumEip712Signature2021') {
      const { domain, types, message, primaryType } = JSON.parse(Buffer.from(data).toString('utf8')) as TypedDataDefinition & { types: Record<string, unknown> };
      if (typeof domain !== 'object' || typeof types !== 'object' || typeof message !== 'object') {
        throw new Error('invalid_arguments: Cannot sign typed data. \'domain\', \'types\', and \'message\' must be provided');
      }
      const { EIP712Domain: _domain, ...rest } = types;
      return account.signTypedData({ domain, types: rest, message, primaryType: primaryType ?? Object.keys(rest)[0]! } as TypedDataDefinition);
    }
    if (algorithm === 'eth_signTransaction' || algorithm === 'signTransaction' || algorithm === 'signTx') {
      const transaction = parseTransaction(`0x${Buffer.from(data).toString('hex')}` as Hex);
      return account.signTransaction(transaction as Parameters<LocalAccount['signTransaction']>[0]);
    }
    throw new Error(`not_supported: cannot sign with ${algorithm} (${algorithms.join(', ')})`);
  }
}
