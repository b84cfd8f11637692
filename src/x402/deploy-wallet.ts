import type { Address, Hex } from 'viem';
import { DomainError } from '#shared/errors.ts';
import { keyedLock } from '#shared/keyed-lock.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';
import { erc6492Deployment, factoryAllowed, undeployedWalletReason } from './contract-signature.ts';

/** The journal's kind of a payer's wallet deployment sent by the facilitator (chain_txs.kind). */
export const walletDeploymentKind = 'wallet-deploy';

/** The published reason for a factory call that did not deploy the wallet (`@x402/evm`'s `ErrSmartWalletDeploymentFailed`). */
export const deploymentFailedReason = 'smart_wallet_deployment_failed';

/**
 * `ready`: the wallet has code (it had, or the factory call deployed it): send the transfer.
 * `pending`: its deployment is journaled and not mined yet: the relayer's recovery finishes it and
 * the sweep carries the settlement again. `failed`: the settlement fails with `reason`.
 */
export type DeploymentOutcome = 'ready' | 'pending' | { failed: string };

/** One deployment decision per wallet at a time in this process (two payments of one new wallet). */
const underWalletLock = keyedLock();

/**
 * Deploys the wallet of an ERC-6492 payer before its transfer: the wrapper's factory call, sent to
 * the factory as a journaled transaction of the relayer's platform account (the platform pays its
 * gas), once. Nothing is sent when `signature` is not a 6492 wrapper or `payer` has code already
 * (deployed meanwhile, by another payment or anyone); the factory is checked against the allow-list
 * again (it may have changed since verify). Exactly once: the journal holds the transaction
 * (reference `x402-wallet:<payer>`) before it is broadcast, so after a crash the relayer's recovery
 * finishes it and the next attempt finds it (`pending` while unmined, the code once mined); two
 * payments of one wallet decide one at a time here, and on another instance the factory call
 * estimated after the wallet exists reverts, so nothing is sent. A CREATE2 address is never
 * deployed twice either way.
 */
export async function deployPayerWallet(
  deps: Pick<X402Deps, 'chains' | 'relayer' | 'walletDeployments' | 'logger' | 'faults'>, network: NetworkName, payer: Address, signature: Hex,
): Promise<DeploymentOutcome> {
  const deployment = erc6492Deployment(signature);
  if (!deployment) return 'ready';
  const { client } = deps.chains[network];
  const deployed = async () => {
    const code = await client.getCode({ address: payer });
    return code !== undefined && code !== '0x';
  };
  if (await deployed()) return 'ready';
  const allowed = deps.walletDeployments;
  if (!allowed || !factoryAllowed(allowed.factories, deployment.factory)) return { failed: undeployedWalletReason };
  return underWalletLock(`${network}:${payer}`, async () => {
    if (await deployed()) return 'ready';
    const reference = `x402-wallet:${payer}`;
    const journaled = await allowed.journal.findLatest(network, walletDeploymentKind, reference);
    if (journaled?.status === 'signed') return 'pending';
    let result;
    try {
      result = await deps.relayer.submit(network, {
        to: deployment.factory, data: deployment.factoryCalldata,
        intent: { kind: walletDeploymentKind, reference, contractAddress: deployment.factory, toAddress: payer },
      });
    } catch (error) {
      // The node says the call reverts: nothing journaled, nothing sent. Deployed meanwhile, or a call that cannot deploy it.
      if (error instanceof DomainError && error.code === 'chain.transaction_failed') return await deployed() ? 'ready' : { failed: deploymentFailedReason };
      throw error;
    }
    if (result.status === 'signed') return 'pending';
    if (await deployed()) {
      deps.faults?.at('x402.after-wallet-deployment');
      return 'ready';
    }
    deps.logger.warn({ network, payer, factory: deployment.factory, txHash: result.txHash, status: result.status }, 'x402 wallet deployment left no code at the payer');
    return { failed: deploymentFailedReason };
  });
}
