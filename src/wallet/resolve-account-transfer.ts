import { encodeFunctionData, getAddress, parseSignature, signatureToCompactSignature, type Address, type Hex } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { vixpayAccountAbi } from '../gen/contracts/vixpay-account.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { signNonceCancellation } from '../chain/account-transfer.ts';
import { isDelegatedTo } from '../chain/account-settlement.ts';
import type { AuthorizationRecord } from '../store/authorization-repository.ts';
import type { WalletDeps } from './wallet-deps.ts';
import { keysOf } from './wallet-keys.ts';
import { expiredByNow } from './authorization-expiry.ts';

type ResolveDeps = Pick<WalletDeps, 'authorizations' | 'chains' | 'repo' | 'contracts' | 'vault' | 'keys' | 'relayer' | 'clock' | 'delegated'>;
type Outcome = { status: 'used'; txHash: Hex } | { status: 'canceled' | 'expired' | 'void' } | { status: 'open' };

// Stryker disable next-line BooleanLiteral,ArrowFunction: equivalent (the value a failed write's catch answers is never read)
const unrecorded = () => false;

/**
 * What the chain says of an account transfer's nonce (src/wallet/authorize-account-transfer.ts), as
 * `settledOnChain` does of an EIP-3009 authorization: cancelled (the account's `NonceCancelled`),
 * used by a transfer (the token's `Transfer` of that value from the account to the payee, in the
 * transaction the row was sent in, else the first since the row's `fromBlock`), or past its deadline
 * unused; undefined while it can still execute or the node does not answer. An account whose code is
 * not the delegation to VixpayAccount has executed nothing. Records the answer.
 */
export async function accountTransferOnChain(deps: ResolveDeps, network: NetworkName, record: AuthorizationRecord): Promise<Outcome | undefined> {
  const { client } = deps.chains[network];
  const account = getAddress(record.fromAddress);
  const nonce = BigInt(record.chainNonce ?? '0x');
  try {
    const delegated = isDelegatedTo(await client.getCode({ address: account }), deps.contracts[network].account);
    // Seen delegated before and not now: the chain lost that block; the next transfer carries the delegation again.
    if (!delegated) deps.delegated.forget(network, deps.contracts[network].account, account);
    const used = delegated && await client.readContract({ address: account, abi: vixpayAccountAbi, functionName: 'nonceUsed', args: [nonce] });
    if (!used) return await expiredByNow(deps, network, record);
    const fromBlock = BigInt(record.fromBlock);
    const cancelled = (await client.getContractEvents({ address: account, abi: vixpayAccountAbi, eventName: 'NonceCancelled', fromBlock }))
      .find((log) => log.args.nonce === nonce);
    if (cancelled) {
      await deps.authorizations.finish(record.nonce, 'canceled', { cancelTxHash: cancelled.transactionHash }, deps.clock()).catch(unrecorded);
      return { status: 'canceled' };
    }
    const transfers = (await client.getContractEvents({
      address: record.contractAddress as Address, abi: vixpTokenAbi, eventName: 'Transfer', args: { from: account, to: record.toAddress as Address }, fromBlock,
    })).filter((log) => log.args.value === BigInt(record.value));
    const executed = transfers.find((log) => log.transactionHash === record.txHash) ?? transfers[0];
    if (!executed) return undefined;
    await deps.authorizations.finish(record.nonce, 'used', { txHash: executed.transactionHash }, deps.clock()).catch(unrecorded);
    return { status: 'used', txHash: executed.transactionHash };
  } catch {
    return undefined;
  }
}

/**
 * Ends an account transfer that did not confirm, as `resolveAuthorization` does an EIP-3009 one: the
 * chain's answer when it has one; else the account signs `CancelNonce` and the relayer submits
 * `cancelNonce` to the account, after which nothing can execute the transfer. An account not
 * delegated yet cannot cancel (nor execute) anything: open until its deadline passes.
 */
export async function resolveAccountTransfer(deps: ResolveDeps, network: NetworkName, record: AuthorizationRecord): Promise<Outcome> {
  const onChain = await accountTransferOnChain(deps, network, record);
  if (onChain) return onChain;
  if (record.status === 'reserved') return { status: 'open' };
  const stored = await deps.repo.findAccount(record.fromAddress);
  if (!stored) return { status: 'open' };
  const account = getAddress(stored.address);
  const { client, chainId } = deps.chains[network];
  try {
    if (!isDelegatedTo(await client.getCode({ address: account }), deps.contracts[network].account)) return { status: 'open' };
    const holder = keysOf(deps).account(stored.privateKeyEnc, account);
    const nonce = BigInt(record.chainNonce ?? '0x');
    const { r, yParityAndS: vs } = signatureToCompactSignature(parseSignature(await signNonceCancellation(holder, chainId, nonce)));
    const result = await deps.relayer.submit(network, {
      to: account,
      data: encodeFunctionData({ abi: vixpayAccountAbi, functionName: 'cancelNonce', args: [nonce, r, vs] }),
      intent: { kind: 'cancel-authorization', reference: record.reference, fromAddress: account, contractAddress: record.contractAddress },
    });
    if (result.status === 'confirmed') {
      await deps.authorizations.finish(record.nonce, 'canceled', { cancelTxHash: result.txHash }, deps.clock());
      return { status: 'canceled' };
    }
  } catch {
    // Refused by the node: most likely the nonce was used meanwhile. The chain decides below.
  }
  return (await accountTransferOnChain(deps, network, record)) ?? { status: 'open' };
}
