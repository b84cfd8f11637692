import type { Address, Hex } from 'viem';
import type { SettlementItem } from '../chain/relay-types.ts';
import type { NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { DomainError, isDomainError, leavesOutcomeOpen } from '#shared/errors.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';
import type { ResolvedToken } from './token.ts';
import { resolveAuthorization } from './resolve-authorization.ts';
import { releaseUnsent } from './unsent-reservations.ts';
import { accountNonce, countedNonce } from './authorization-nonce.ts';
import { signAccountItem } from './authorize-account-transfer.ts';
import { custodialTransferPath } from './transfer-path.ts';

export interface AuthorizeTransferParameters {
  token: ResolvedToken;
  from: Address;
  to: Address;
  value: bigint;
  /** The operation this transfer belongs to, unique per network (e.g. `payment:<attempt id>`). */
  reference: string;
  /** The holder's encrypted account key. */
  privateKeyEnc: string;
  /** The hash of the temp key that authorises it, used up when the funds are reserved. */
  tempKeyHash?: string;
}

export const transferAuthorizationTypes = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/**
 * Moves `value` from a custodial account by an EIP-3009 authorization that the relayer submits:
 * 1. reserves the value on the account (refused with `wallet.insufficient_balance` when the balance
 *    less what open authorizations hold does not cover it: no signature, no transaction);
 * 2. signs the authorization with the account's next counter nonce (src/wallet/authorization-nonce.ts:
 *    one operation has one authorization, its reference unique per network), valid for a short window;
 * 3. has the relayer settle it in a batch (journaled first); answers the batch's transaction once
 *    its receipt shows this authorization used.
 * When the batch skipped it, reverted or has no receipt within the wait, the authorization is cancelled
 * on chain before anything is answered: `chain.transaction_failed` then means nothing moved and
 * nothing signed stays usable. `{ status: 'pending' }` (a value, with its transaction) means the chain
 * did not settle it either way yet (the node is down or slow); the funds stay held until the expiry
 * sweep decides.
 * `store.full` (the disk is full) means nothing was sent: the reservation is undone and the temp key
 * is usable again (at once, or once the store can write: unsent-reservations.ts). A write that fails
 * after the transfer was sent never turns into a refusal: the chain says how it ended.
 */
/** Executed on chain in `transactionId`, or sent in it and not settled either way yet. */
export interface AuthorizedTransfer {
  status: 'settled' | 'pending';
  transactionId: Hex;
}

export async function authorizeTransfer(deps: WalletDeps, network: NetworkName, params: AuthorizeTransferParameters): Promise<AuthorizedTransfer> {
  const { client, chainId } = deps.chains[network];
  const { token, from, to, value, reference } = params;
  // On a network with EIP-7702, every token (transfer-path.ts): the account's own signed transfer through
  // the account contract it delegates to, with its dense account nonce (authorize-account-transfer.ts).
  const onAccountPath = custodialTransferPath(network, token, deps.eip7702) === 'account';
  const now = deps.clock();
  const validBefore = Math.floor(now / 1000) + deps.authorizationTtlSeconds;
  let fromBlock: bigint;
  try {
    // Where the chain's events about it can start: a head the receipt watcher read lately does (an
    // earlier block only widens the search), without a call per transfer.
    fromBlock = deps.chains[network].blocks.recentHead(Date.now()) ?? await client.getBlockNumber();
  } catch {
    throw new DomainError('chain.unavailable', `network ${network} does not answer`);
  }
  const reserve = onAccountPath ? deps.authorizations.reserveAccountNonce : deps.authorizations.reserveCounted;
  const reserved = await reserve({
    network, reference, contractAddress: token.contractAddress, fromAddress: from, toAddress: to, value: value.toString(),
    validBefore, fromBlock: Number(fromBlock), createdAt: now, updatedAt: now,
  }, {
    ...(params.tempKeyHash !== undefined && { consumeTempKey: params.tempKeyHash }),
    balance: () => client.readContract({ address: token.contractAddress, abi: vixpTokenAbi, functionName: 'balanceOf', args: [from] })
      .catch(() => { throw new DomainError('chain.unavailable', `network ${network} does not answer`); }),
  }, (previous) => (onAccountPath ? accountNonce(network, from, previous) : countedNonce(network, token.contractAddress, from, previous, now)));
  if (reserved === 'temp_key_used') throw new DomainError('wallet.temp_key_invalid', 'tempKey was already used');
  if (reserved === 'insufficient') throw new DomainError('wallet.insufficient_balance', 'the balance, less what pending transfers hold, is below the amount');
  if (reserved === 'duplicate') throw new DomainError('request.invalid', 'this operation already has a transfer authorization');
  // The row's key, and the EIP-3009 nonce signed.
  const { nonce, chainNonce } = reserved;

  let signature: Hex;
  let account: SettlementItem['account'];
  try {
    const holder = keysOf(deps).account(params.privateKeyEnc, from);
    if (onAccountPath) {
      ({ signature, account } = await signAccountItem(deps, network, holder, { token: token.contractAddress, to, value, nonce: chainNonce as Hex, validBefore }));
    } else {
      signature = await holder.signTypedData({
        domain: { name: token.name, version: token.version, chainId, verifyingContract: token.contractAddress },
        types: transferAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: { from, to, value, validAfter: 0n, validBefore: BigInt(validBefore), nonce: chainNonce as Hex },
      });
    }
  } catch (error) {
    // Not signed (the HSM holding the wallet's key is unavailable): nothing exists to send; the
    // reservation is undone and the temp key given back, so the same request works once it is back.
    await releaseUnsent(deps.authorizations, nonce, params.tempKeyHash);
    throw error;
  }
  let result;
  try {
    result = await deps.relayer.settle(network, onAccountPath ? deps.contracts[network].accountSettlement : deps.contracts[network].settlement, {
      token: token.contractAddress, from, to, value, validBefore: BigInt(onAccountPath ? validBefore - 1 : validBefore), nonce: chainNonce as Hex, key: nonce, signature,
      ...(account && { account }),
    });
  } catch (error) {
    // A failure that may come after the broadcast: the authorization stays open, holding its funds,
    // until the chain settles it (the expiry sweep).
    if (leavesOutcomeOpen(error)) throw error;
    const record = await deps.authorizations.find(nonce);
    if (record?.status !== 'submitted') {
      // Not journaled (journaling marks it submitted in the same transaction): nothing was sent, the
      // signature never left this process. A full disk or a key custody (HSM) that could not sign
      // gives the temp key back for a retry: the same request goes through once either is back.
      if (isStoreFull(error) || isCustodyUnavailable(error)) await releaseUnsent(deps.authorizations, nonce, params.tempKeyHash);
      else {
        await deps.authorizations.finish(nonce, 'void', {}, deps.clock()).catch(async (failure: unknown) => {
          if (isStoreFull(failure)) await releaseUnsent(deps.authorizations, nonce, params.tempKeyHash);
          throw failure;
        });
      }
      throw error;
    }
    // Journaled and sent, then a write of its outcome failed (the disk filled meanwhile): the chain decides.
    // Stryker disable next-line StringLiteral: equivalent (a journaled row has its transaction's hash, so '0x' is never taken; any status but 'confirmed' is read the same below)
    result = { txHash: (record.txHash ?? '0x') as Hex, status: 'signed' as const };
  }
  if (result.status === 'confirmed') {
    // An account item executed only because the account's code is the delegation: its next transfers need not ask.
    if (onAccountPath) deps.delegated.add(network, deps.contracts[network].account, from);
    // Executed: answered so even when the disk is too full to record it now (the expiry sweep records it).
    await deps.authorizations.finish(nonce, 'used', { txHash: result.txHash }, deps.clock()).catch((failure: unknown) => {
      if (!isStoreFull(failure)) throw failure;
    });
    return { status: 'settled', transactionId: result.txHash };
  }
  const outcome = await resolveAuthorization(deps, network, nonce as Hex);
  if (outcome.status === 'used') return { status: 'settled', transactionId: outcome.txHash };
  if (outcome.status === 'open') return { status: 'pending', transactionId: result.txHash };
  throw new DomainError('chain.transaction_failed', 'the transfer was not executed on chain; its authorization is cancelled', { details: result.txHash });
}

const isStoreFull = (error: unknown) => isDomainError(error) && error.code === 'store.full';
const isCustodyUnavailable = (error: unknown) => isDomainError(error) && error.code === 'custody.unavailable';
