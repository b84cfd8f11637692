import { BaseError, encodeFunctionData, isAddressEqual, MethodNotFoundRpcError, MethodNotSupportedRpcError, type Address, type Hex } from 'viem';
import { startAssetContractCheck } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { VerifyResponse } from '@x402/core/types';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';
import { networkOfX402 } from './x402-networks.ts';
import { acceptedAsset, type X402Asset } from './x402-assets.ts';
import { parseRequest, type BoundRequirements, type ExactAuthorization } from './parse-request.ts';
import { transferAuthorizationTypes } from '../wallet/authorize-transfer.ts';
import { verifyingSigner } from './exact-evm-signer.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import { carriesWindow } from '../chain/settlement-calldata.ts';
import { walletSignature, type WalletDeployment } from './contract-signature.ts';
import { errorSummary } from '#shared/redact.ts';
import { clockSecondsOf, defaultMaxHoldSeconds, dueAtSeconds, windowRefusal } from './valid-window.ts';

/** A payment verify accepted: what settle needs to carry it. */
export interface VerifiedPayment {
  network: NetworkName;
  x402Network: string;
  asset: X402Asset;
  authorization: ExactAuthorization;
  signature: Hex;
}

export type VerifyOutcome = { response: VerifyResponse; verified?: VerifiedPayment };

type VerifyDeps = Pick<X402Deps, 'chains' | 'contracts' | 'relayer' | 'authorizations' | 'settlementTokens' | 'clock' | 'walletDeployments' | 'maxHoldSeconds'>;

/** One published `exact` EVM verifier per network (and per platform: keyed by its chain client). */
const schemes = new WeakMap<object, ExactEvmScheme>();

const refused = (invalidReason: string, invalidMessage: string, payer?: string): VerifyOutcome =>
  ({ response: { isValid: false, invalidReason, invalidMessage, ...(payer !== undefined && { payer }) } });

/**
 * POST /x402/verify: what the x402 `exact` scheme for EVM asks, checked by the published verifier
 * (`@x402/evm`: signature, `payTo`, the validity window, the amount, and a simulation of the transfer
 * that finds a used nonce or a short balance), after our own checks of the network (one of ours), the
 * amount (above 0: a zero transfer would only cost the platform gas), the asset (VIXP or
 * allow-listed) and its EIP-712 domain; then what a batch needs: a validity window the
 * settlement contract carries (`carriesWindow`: any timestamps), the nonce not held by an authorization of ours (in
 * flight or ended), and the payer's balance less what their authorizations in flight hold.
 * Nothing is written: verify never holds funds (settle does, atomically).
 */
export async function verifyPayment(deps: VerifyDeps, body: unknown): Promise<VerifyOutcome> {
  const parsed = parseRequest(body);
  if (!parsed.ok) return refused(parsed.reason, parsed.message, parsed.payer);
  const { payload, requirements, bound, authorization, signature } = parsed;
  const payer = authorization.from;
  if (requirements.scheme !== 'exact' || payload.accepted.scheme !== 'exact') return refused('unsupported_scheme', 'this facilitator settles the exact scheme', payer);
  const network = networkOfX402(deps.chains, requirements.network);
  if (!network || payload.accepted.network !== requirements.network) return refused('invalid_network', `network ${requirements.network} is not settled here (GET /x402/supported)`, payer);
  // Nothing moves for nothing: the platform would pay the gas of a zero transfer.
  if (bound.amount === 0n || authorization.value === 0n) return refused('invalid_exact_evm_authorization_value', 'the amount must be above 0', payer);
  const asset = await acceptedAsset(deps, network, bound.asset);
  if (!asset) return refused('invalid_payment_requirements', `asset ${requirements.asset} is not a token settled on ${requirements.network} (GET /x402/supported)`, payer);
  if (requirements.extra?.name !== asset.name) return refused('invalid_exact_evm_token_name_mismatch', `extra.name must be "${asset.name}", the token's EIP-712 name`, payer); // Stryker disable next-line OptionalChaining: equivalent, without extra the name check above has refused
  if (requirements.extra?.version !== asset.version) return refused('invalid_exact_evm_token_version_mismatch', `extra.version must be "${asset.version}"`, payer);
  // Any validAfter a batch can carry (any timestamp; contracts/VixpSettlement.sol); one still in the
  // future is accepted and held until it is due (carry-settlement.ts) when it is due within
  // X402_MAX_HOLD_SECONDS and then leaves time to settle it (valid-window.ts).
  const nowS = clockSecondsOf(deps.clock());
  if (dueAtSeconds(authorization.validAfter) >= authorization.validBefore) {
    return refused('invalid_exact_evm_payload_authorization_valid_after', 'validAfter must be at least 2 s before validBefore: no block can execute this authorization', payer);
  }
  if (!carriesWindow(authorization.validAfter, authorization.validBefore)) {
    return refused('invalid_exact_evm_payload_authorization_valid_before', 'validAfter must be below 2^128 − 1, validBefore below 2^128 − 1 or exactly 2^256 − 1', payer);
  }
  const window = windowRefusal(authorization.validAfter, authorization.validBefore, nowS, deps.maxHoldSeconds ?? defaultMaxHoldSeconds);
  if (window) return refused(window.reason, window.message, payer);

  const chain = deps.chains[network];
  // A smart wallet's signature (contract-signature.ts): an ERC-6492 wrapper of a deployed wallet is
  // checked as its inner signature (ERC-1271, below); of a wallet not deployed, only when its factory
  // is allow-listed, as a whole (verifyCounterfactual); refused otherwise.
  const wallet = await walletSignature(chain.client, payer, signature, deps.walletDeployments?.factories ?? []);
  if (!wallet.ok) return refused(wallet.reason, wallet.message, payer);
  // The payload as the published verifier checks it: with the wallet's own signature (an ERC-6492 wrapper's inner one).
  const checkedPayload = { ...payload, payload: { ...payload.payload, signature: wallet.signature } };
  const signer = verifyingSigner(chain, deps.relayer.lanes);
  let scheme = schemes.get(chain); // Stryker disable next-line ConditionalExpression: equivalent, a verifier made per request (stateless) checks the same; the cache saves its construction
  if (!scheme) schemes.set(chain, scheme = new ExactEvmScheme(signer));
  // The published verifier refuses a validAfter still ahead of the clock; the platform holds such a
  // payment until it is due (carry-settlement.ts), so it checks the same fields itself (the
  // simulation aside: the balance and the nonce are read below).
  const due = authorization.validAfter <= nowS;
  // The published verifier starts its check that the asset is a contract (eth_getCode) in the
  // background and awaits it last: when it returns or throws earlier (a node that does not answer
  // the payer's code), that check's failure is a rejection nobody awaits, which ends the process.
  // Awaited here first, it is one of ours (its error answered as any other node error), and it fills
  // the published cache (15 minutes) that the verifier's own check then reads without a call.
  if (due && !wallet.deployment) await startAssetContractCheck(signer, requirements.network, asset.address).await();
  const checked = wallet.deployment
    ? await verifyCounterfactual(chain, asset, bound, authorization, signature, { ...wallet.deployment, signature: wallet.signature }, { due, sender: deps.relayer.address })
    : due ? await scheme.verify(checkedPayload, requirements) : await verifyNotYetDue(chain, asset, bound, authorization, wallet.signature);
  const [balance, held, used] = await Promise.all([
    chain.client.readContract({ address: asset.address, abi: vixpTokenAbi, functionName: 'balanceOf', args: [payer] }),
    deps.authorizations.held({ network, contractAddress: asset.address, fromAddress: payer }),
    chain.client.readContract({ address: asset.address, abi: vixpTokenAbi, functionName: 'authorizationState', args: [payer, authorization.nonce] }),
  ]);
  if (!checked.isValid) {
    // The published diagnosis of a failed simulation needs Multicall3, which a local chain may lack: ours reads the two usual causes.
    if (checked.invalidReason === 'invalid_exact_evm_transaction_simulation_failed') {
      if (used) return refused('invalid_exact_evm_nonce_already_used', 'this authorization was used or cancelled on chain', payer);
      if (balance < authorization.value) return refused('insufficient_funds', 'the payer\'s balance is below the amount', payer);
    }
    return { response: { ...checked, payer } };
  }
  if (used) return refused('invalid_exact_evm_nonce_already_used', 'this authorization was used or cancelled on chain', payer);
  if (await deps.authorizations.find(authorizationKey(network, asset.address, payer, authorization.nonce))) {
    return refused('invalid_exact_evm_nonce_already_used', 'this authorization was already submitted for settlement', payer);
  }
  if (balance - held < authorization.value) {
    return refused('insufficient_funds', 'the balance, less what the payer\'s authorizations in flight hold, is below the amount', payer);
  }
  return { response: { isValid: true, payer }, verified: { network, x402Network: requirements.network, asset, authorization, signature } };
}

/**
 * What `ExactEvmScheme.verify` checks of an EIP-3009 authorization, for one whose validAfter is still
 * ahead: the payer's signature over it in the token's EIP-712 domain (viem's verifyTypedData: an
 * ECDSA key, a deployed wallet's ERC-1271 answer, or an ERC-6492 wrapper's: the factory call then
 * `isValidSignature`, in one deployless call), `to` = `payTo` and the amount, with the published verifier's reasons
 * (validBefore's margin is checked before, for every payment: valid-window.ts).
 */
async function verifyNotYetDue(
  chain: VerifyDeps['chains'][NetworkName], asset: X402Asset, bound: BoundRequirements,
  authorization: ExactAuthorization, signature: Hex,
): Promise<VerifyResponse> {
  const payer = authorization.from;
  const signed = await chain.client.verifyTypedData({
    address: payer, signature,
    domain: { name: asset.name, version: asset.version, chainId: chain.chainId, verifyingContract: asset.address },
    types: transferAuthorizationTypes, primaryType: 'TransferWithAuthorization',
    message: { ...authorization },
  }).catch(/* Stryker disable next-line ArrowFunction: equivalent, undefined is as falsy as false */ () => false);
  if (!signed) return { isValid: false, invalidReason: 'invalid_exact_evm_signature', payer };
  if (!isAddressEqual(authorization.to, bound.payTo)) return { isValid: false, invalidReason: 'invalid_exact_evm_recipient_mismatch', payer };
  if (authorization.value !== bound.amount) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_value_mismatch', payer };
  return { isValid: true, payer };
}

/**
 * An ERC-6492 payment of a wallet not deployed yet whose factory is allow-listed: what the published
 * verifier checks of it (`@x402/evm` 2.27.0 with `eip6492AllowedFactories`), without Multicall3, which
 * our local chains lack. The signature as a whole (the wrapper: viem's deployless ERC-6492 validator
 * runs the factory call, then asks the new wallet's `isValidSignature`; the published verifier leaves
 * it to the simulation), the fields, and, once due, a simulation of what settle sends, as settle
 * sends it: the factory call from the platform account, then the token's `transferWithAuthorization(…,
 * bytes signature)` with the inner signature, two calls in one simulated block (`eth_simulateV1`), so
 * nothing is deployed by verify. (Both in one call, as the published verifier's Multicall3 batch or
 * viem's `call` with `factory` do, failed for a Safe 1.5.0 on anvil 1.7.1: the token's
 * `InvalidAuthorizationSignature`, while the same two calls in sequence pass.) A node without
 * `eth_simulateV1` gets no simulation: the balance and the nonce are still read (verifyPayment).
 */
async function verifyCounterfactual(
  chain: VerifyDeps['chains'][NetworkName], asset: X402Asset, bound: BoundRequirements, authorization: ExactAuthorization,
  wrapped: Hex, deployment: WalletDeployment & { signature: Hex }, simulation: { due: boolean; sender: Address },
): Promise<VerifyResponse> {
  const fields = await verifyNotYetDue(chain, asset, bound, authorization, wrapped);
  if (!fields.isValid || !simulation.due) return fields;
  const { from, to, value, validAfter, validBefore, nonce } = authorization;
  let results;
  try {
    ({ results } = await chain.client.simulateCalls({
      account: simulation.sender,
      calls: [
        { to: deployment.factory, data: deployment.factoryCalldata },
        { to: asset.address, data: encodeFunctionData({ abi: vixpTokenAbi, functionName: 'transferWithAuthorization', args: [from, to, value, validAfter, validBefore, nonce, deployment.signature] }) },
      ],
    }));
  } catch (error) {
    const unsupported = error instanceof BaseError && error.walk((e) => e instanceof MethodNotFoundRpcError || e instanceof MethodNotSupportedRpcError);
    if (unsupported) return fields;
    return { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: errorSummary(error), payer: from };
  }
  const [deployed, transferred] = results;
  // Stryker disable next-line OptionalChaining: equivalent, simulateCalls answers a result per call: two
  if (deployed?.status !== 'success') {
    return { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: `the factory call does not deploy the wallet: ${errorSummary(deployed?.error)}`, payer: from };
  }
  // Stryker disable next-line OptionalChaining: equivalent, simulateCalls answers a result per call: two
  if (transferred?.status !== 'success') {
    // Stryker disable next-line OptionalChaining: equivalent, simulateCalls answers a result per call: two
    return { isValid: false, invalidReason: 'invalid_exact_evm_transaction_simulation_failed', invalidMessage: `the transfer after the deployment reverts: ${errorSummary(transferred?.error)}`, payer: from };
  }
  return fields;
}
