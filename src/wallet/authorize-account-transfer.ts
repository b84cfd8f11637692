import { hexToBigInt, type Address, type Hex, type LocalAccount } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import { errorSummary } from '#shared/redact.ts';
import { signAccountTransfer, signDelegation, type DigestSigner } from '../chain/account-transfer.ts';
import { isDelegatedTo } from '../chain/account-settlement.ts';
import type { SettlementItem } from '../chain/relay-types.ts';
import type { WalletDeps } from './wallet-deps.ts';

/**
 * A custodial account's transfer on a network with EIP-7702 (transfer-path.ts, docs/decisions/tokens.md): the
 * account's own EIP-712 `Transfer` in its VixpayAccount domain, with its dense account nonce
 * (src/wallet/authorization-nonce.ts, `accountNonce`), and, while the account's code is not the
 * delegation to the network's VixpayAccount, its EIP-7702 delegation, which the settlement
 * transaction carries. The rest (reserving the funds, the relayer's batch, its outcome, cancelling
 * what did not execute) is `authorizeTransfer`'s, as for EIP-3009.
 */

/** The custody's raw-digest signer (an EIP-7702 delegation signs one); `custody.unavailable` when it has none. */
export function digestSignerOf(holder: LocalAccount): DigestSigner {
  const { sign } = holder;
  if (!sign) throw new DomainError('custody.unavailable', `the custody of ${holder.address} cannot sign a raw digest (an EIP-7702 delegation)`);
  return { address: holder.address, sign };
}

/**
 * The delegation `holder`'s account needs on `network` before its transfers execute: none when it was
 * seen delegated, or its code already is `0xef0100 ‖ VixpayAccount`; else signed at its transaction
 * count (a custodial account sends nothing: 0). Two transfers signing one before either is mined carry
 * the same authorization (one nonce); the second in the chain is skipped by EIP-7702, not the transaction.
 */
export async function delegationFor(deps: Pick<WalletDeps, 'chains' | 'contracts' | 'delegated'>, network: NetworkName, holder: LocalAccount) {
  const { client, chainId } = deps.chains[network];
  const contract = deps.contracts[network].account;
  if (deps.delegated.has(network, contract, holder.address)) return undefined;
  let code: Hex | undefined;
  let count: number;
  try {
    code = await client.getCode({ address: holder.address });
    if (isDelegatedTo(code, contract)) {
      deps.delegated.add(network, contract, holder.address);
      return undefined;
    }
    count = await client.getTransactionCount({ address: holder.address });
  } catch (cause) {
    throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
  }
  return signDelegation(digestSignerOf(holder), chainId, contract, count);
}

/** The signature and the account part of a settlement item moving `value` of `token` from `holder`'s account. */
export async function signAccountItem(deps: Pick<WalletDeps, 'chains' | 'contracts' | 'delegated'>, network: NetworkName, holder: LocalAccount,
  transfer: { token: Address; to: Address; value: bigint; nonce: Hex; validBefore: number }): Promise<{ signature: Hex; account: NonNullable<SettlementItem['account']> }> {
  const delegation = await delegationFor(deps, network, holder);
  // The deadline is the last second it executes in: one before the row's validBefore, as EIP-3009's bound is exclusive.
  const { signature } = await signAccountTransfer(holder, deps.chains[network].chainId, {
    token: transfer.token, to: transfer.to, value: transfer.value, nonce: hexToBigInt(transfer.nonce), deadline: BigInt(transfer.validBefore - 1),
  });
  return { signature, account: { delegation } };
}
