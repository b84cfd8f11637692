import { encodeFunctionData, getAddress, type Address, type Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { AuthorizationRecord } from '../store/authorization-repository.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';
import { resolveToken } from './token.ts';
import { isAccountTransferRow } from './authorization-nonce.ts';
import { accountTransferOnChain, resolveAccountTransfer } from './resolve-account-transfer.ts';
import { expiredByNow } from './authorization-expiry.ts';

export type AuthorizationOutcome =
  | { status: 'used'; txHash: Hex }
  | { status: 'canceled' | 'expired' | 'void' }
  /** Still able to execute, or the chain could not be asked. */
  | { status: 'open' };

type ResolveDeps = Pick<WalletDeps, 'authorizations' | 'chains' | 'repo' | 'contracts' | 'vault' | 'keys' | 'relayer' | 'clock' | 'delegated'>;

const cancelAuthorizationTypes = {
  CancelAuthorization: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }],
} as const;

/**
 * Settles an authorization whose transaction did not confirm (reverted, dropped, not mined in
 * time): if the chain shows the nonce used, the transfer happened (by our transaction or anyone
 * else's re-send of it) and its transaction is answered; otherwise the holder signs
 * `cancelAuthorization` and the relayer submits it, after which nothing can execute it. A revert
 * rolls an authorization's nonce back on chain, so without this a copy of the reverted calldata
 * would move the tokens later for an operation we reported failed.
 */
export async function resolveAuthorization(deps: ResolveDeps, network: NetworkName, nonce: Hex): Promise<AuthorizationOutcome> {
  const record = await deps.authorizations.find(nonce);
  if (!record) return { status: 'void' };
  const ended = endedOutcome(record);
  if (ended) return ended;
  // An account transfer (a token without EIP-3009): its nonce is the account's, cancelled at the account.
  if (isAccountTransferRow(record)) return resolveAccountTransfer(deps, network, record);
  const onChain = await settledOnChain(deps, network, record);
  if (onChain) return onChain;
  if (record.status === 'reserved') {
    // Never journaled, so never sent; only this process could still be sending it.
    return { status: 'open' };
  }

  const account = await deps.repo.findAccount(record.fromAddress);
  if (!account) return { status: 'open' };
  const token = await resolveToken(deps, network, record.contractAddress);
  const holder = keysOf(deps).account(account.privateKeyEnc, getAddress(account.address));
  const signature = await holder.signTypedData({
    domain: { name: token.name, version: token.version, chainId: deps.chains[network].chainId, verifyingContract: token.contractAddress },
    types: cancelAuthorizationTypes,
    primaryType: 'CancelAuthorization',
    message: { authorizer: holder.address, nonce: (record.chainNonce ?? record.nonce) as Hex },
  });
  try {
    const result = await deps.relayer.submit(network, {
      to: token.contractAddress,
      data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'cancelAuthorization', args: [holder.address, (record.chainNonce ?? record.nonce) as Hex, signature] }),
      intent: { kind: 'cancel-authorization', reference: record.reference, fromAddress: holder.address, contractAddress: token.contractAddress },
    });
    if (result.status === 'confirmed') {
      await deps.authorizations.finish(nonce, 'canceled', { cancelTxHash: result.txHash }, deps.clock());
      return { status: 'canceled' };
    }
  } catch {
    // Refused by the node: most likely the nonce was used meanwhile. The chain decides below.
  }
  return (await settledOnChain(deps, network, record)) ?? { status: 'open' };
}

function endedOutcome(record: AuthorizationRecord): AuthorizationOutcome | undefined {
  switch (record.status) {
    case 'used': return { status: 'used', txHash: record.txHash as Hex };
    case 'canceled': case 'expired': case 'void': return { status: record.status };
    default: return undefined;
  }
}

/** A record the store could not write (a full disk): the chain's answer stands, a later sweep records it. */
// Stryker disable next-line BooleanLiteral,ArrowFunction: equivalent (the value a failed write's catch answers is never read)
const unrecorded = () => false;

/**
 * What the chain says of the nonce: used (with the transaction that used it), cancelled, or past its
 * validity without either; undefined while it can still execute or the node does not answer.
 * Records the answer.
 */
async function settledOnChain(deps: ResolveDeps, network: NetworkName, record: AuthorizationRecord): Promise<AuthorizationOutcome | undefined> {
  const { client } = deps.chains[network];
  const address = record.contractAddress as Address;
  const authorizer = record.fromAddress as Address;
  // The nonce on chain; the row is ended by its key (an outside payer's differs from it).
  const nonce = (record.chainNonce ?? record.nonce) as Hex;
  try {
    const settled = await client.readContract({ address, abi: vixpTokenAbi, functionName: 'authorizationState', args: [authorizer, nonce] });
    if (!settled) return await expiredByNow(deps, network, record);
    const fromBlock = BigInt(record.fromBlock);
    const [used] = await client.getContractEvents({ address, abi: vixpTokenAbi, eventName: 'AuthorizationUsed', args: { authorizer, nonce }, fromBlock });
    if (used) {
      await deps.authorizations.finish(record.nonce, 'used', { txHash: used.transactionHash }, deps.clock()).catch(unrecorded);
      return { status: 'used', txHash: used.transactionHash };
    }
    const [canceled] = await client.getContractEvents({ address, abi: vixpTokenAbi, eventName: 'AuthorizationCanceled', args: { authorizer, nonce }, fromBlock });
    if (!canceled) return undefined;
    await deps.authorizations.finish(record.nonce, 'canceled', { cancelTxHash: canceled.transactionHash }, deps.clock()).catch(unrecorded);
    return { status: 'canceled' };
  } catch {
    return undefined;
  }
}

/**
 * Settles every open authorization of a network whose validity window has ended (a crash between
 * reserving and answering, or a chain that was down): each ends used, cancelled or expired, and the
 * funds it held are free again. Account transfers whose transaction was mined without them being
 * recorded used (the process stopped before it read the receipt, recovery read it and found them
 * not executed) do not wait for their deadline: each is resolved as its caller would have
 * (`resolveAccountTransfer`: used, or cancelled at the account now). Run at start and then periodically.
 */
export async function sweepExpiredAuthorizations(deps: ResolveDeps, network: NetworkName): Promise<number> {
  let settled = 0;
  for (const record of await deps.authorizations.listAccountTransfersMined(network)) {
    if ((await resolveAccountTransfer(deps, network, record)).status !== 'open') settled++;
  }
  const expired = await deps.authorizations.listOpenExpired(network, Math.floor(deps.clock() / 1000));
  for (const record of expired) {
    const outcome = isAccountTransferRow(record) ? await accountTransferOnChain(deps, network, record) : await settledOnChain(deps, network, record);
    if (outcome !== undefined) settled++;
  }
  return settled;
}
