import { parseSignature, type Address, type Hex, type LocalAccount, type SignedAuthorization } from 'viem';
import { hashAuthorization } from 'viem/utils';

/**
 * The EIP-712 messages of contracts/VixpayAccount.sol, the code a custodial account delegates to
 * (EIP-7702): a transfer of a token to a payee, and a nonce's cancellation, each signed by the
 * account's own key in the account's own domain (its address is the verifying contract, so the
 * domain names the chain and the account). The key signs them as it signs anything else: any custody
 * (file, PKCS#11 token, wrapped keys) whose account has viem's `signTypedData`.
 */

export const accountTransferTypes = {
  Transfer: [
    { name: 'token', type: 'address' }, { name: 'to', type: 'address' }, { name: 'amount', type: 'uint256' },
    { name: 'nonce', type: 'uint256' }, { name: 'deadline', type: 'uint256' },
  ],
} as const;

export const cancelNonceTypes = { CancelNonce: [{ name: 'nonce', type: 'uint256' }] } as const;

/** The domain of `account` (delegated to VixpayAccount) on chain `chainId`. */
export function accountDomain(chainId: number, account: Address) {
  return { name: 'VixpayAccount', version: '1', chainId, verifyingContract: account } as const;
}

/** A transfer of `value` of `token` from `account` to `to`, executable once (`nonce`) until `deadline` (a second, inclusive). */
export interface AccountTransfer {
  token: Address;
  account: Address;
  to: Address;
  value: bigint;
  /**
   * Unordered: used once, in any order. The contract keeps 256 to a storage word, so an account
   * numbering its nonces densely (0, 1, 2…) writes a fresh word once per 256 transfers.
   */
  nonce: bigint;
  deadline: bigint;
}

/** An account transfer with the account key's 65-byte signature (`r || s || v`, low `s`). */
export interface SignedAccountTransfer extends AccountTransfer {
  signature: Hex;
}

/** The key-custody interface signing: the account's own key, whichever custody holds it. */
export type AccountSigner = Pick<LocalAccount, 'address' | 'signTypedData'>;

/** `signer`'s (the account's own key) signature of a transfer from its account on chain `chainId`. */
export async function signAccountTransfer(signer: AccountSigner, chainId: number, transfer: Omit<AccountTransfer, 'account'>): Promise<SignedAccountTransfer> {
  const { token, to, value, nonce, deadline } = transfer;
  const signature = await signer.signTypedData({
    domain: accountDomain(chainId, signer.address),
    types: accountTransferTypes,
    primaryType: 'Transfer',
    message: { token, to, amount: value, nonce, deadline },
  });
  return { token, account: signer.address, to, value, nonce, deadline, signature };
}

/** `signer`'s signature cancelling `nonce` of its account on chain `chainId` (VixpayAccount.cancelNonce). */
export async function signNonceCancellation(signer: AccountSigner, chainId: number, nonce: bigint): Promise<Hex> {
  return signer.signTypedData({ domain: accountDomain(chainId, signer.address), types: cancelNonceTypes, primaryType: 'CancelNonce', message: { nonce } });
}

/** A custody that signs a raw 32-byte digest (viem's `sign`): what an EIP-7702 authorization needs. */
export interface DigestSigner {
  address: Address;
  sign(parameters: { hash: Hex }): Promise<Hex>;
}

/**
 * The account's EIP-7702 authorization delegating it to `contract` (VixpayAccount) on chain `chainId`
 * at its transaction count `nonce`: the digest keccak256(0x05 ‖ rlp([chainId, contract, nonce])) signed
 * like any other (a PKCS#11 token included), the same bytes as viem's `signAuthorization`. Never chain
 * id 0 (valid on every chain). A relayer's type-4 transaction carries it; the account sends nothing.
 */
export async function signDelegation(signer: DigestSigner, chainId: number, contract: Address, nonce: number): Promise<SignedAuthorization> {
  if (chainId === 0) throw new Error('a delegation names its chain: chain id 0 would be valid on every chain');
  const { r, s, yParity } = parseSignature(await signer.sign({ hash: hashAuthorization({ chainId, contractAddress: contract, nonce }) }));
  return { address: contract, chainId, nonce, r, s, v: 27n + BigInt(yParity), yParity };
}
