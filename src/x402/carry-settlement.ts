import type { Address, Hex } from 'viem';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { errorSummary } from '#shared/redact.ts';
import { clockSeconds, exactNumber, parseAddress, parseUint256 } from '#shared/uint256.ts';
import { clockSecondsOf, defaultMaxHoldSeconds, dueAtSeconds } from './valid-window.ts';
import { isNetworkName, type NetworkName } from '#shared/networks.ts';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { X402Deps } from './x402-deps.ts';
import { finishSettlement } from './finish-settlement.ts';
import { settlementSignature } from './contract-signature.ts';
import { keyedLock } from '#shared/keyed-lock.ts';
import { deployPayerWallet } from './deploy-wallet.ts';

/** Reservations of one payer are decided one at a time in this process (an outside payer has no account row to lock). */
const underPayerLock = keyedLock();

/**
 * Carries an accepted settlement to the chain through the batching relayer, as the wallet's own
 * transfers go (authorize-transfer.ts): its authorization is reserved (its value held on the payer
 * unless the balance less what their authorizations in flight hold no longer covers it: then it
 * fails, nothing sent), then settled in the relayer's next batch, journaled first. Answers once the
 * batch has a receipt, or leaves the settlement `accepted` when the chain has not decided (not mined
 * within the wait, node down): the relayer's recovery finishes the transaction and `observeSettlement`
 * records its outcome. Safe to call again for the same settlement (after a crash): a reservation
 * that exists is reused, and the journal never includes an authorization twice. An ERC-6492 payer's
 * wallet not deployed yet is deployed first, once (deploy-wallet.ts); a deployment that fails
 * releases the reservation and fails the settlement. One not due yet (validAfter ahead) is held:
 * this returns at once, nothing reserved or sent, and the periodic sweep calls it again (no timer:
 * any validAfter, and a restart meanwhile, is only a stored row looked at again).
 */
export async function carrySettlement(deps: X402Deps, record: X402SettlementRecord): Promise<void> {
  const network = record.network as NetworkName;
  const [payer, asset, payTo] = [record.payer as Address, record.asset as Address, record.payTo as Address];
  // The stored numbers as signed, exactly. A row that does not parse (written by hand, or by a
  // version that lost digits) is never sent: failed if nothing was reserved for it, else left to the log.
  const [value, validBefore, validAfter] = [parseUint256(record.amount), parseUint256(record.validBefore), parseUint256(record.validAfter)];
  const existing = await deps.authorizations.find(record.id);
  if (!value.ok || !validBefore.ok || !validAfter.ok || !isNetworkName(network) || !/^0x[0-9a-f]{64}$/.test(record.nonce)
    || ![payer, asset, payTo].every((address) => parseAddress(address).ok) || !/^0x([0-9a-fA-F]{2})+$/.test(record.signature)) {
    if (!existing) await deps.settlements.finish(record.id, { status: 'failed', errorReason: 'invalid_transaction_state' }, deps.clock());
    throw new Error(`x402 settlement ${record.nonce}: its stored row is not a settlement that can be sent`);
  }
  const { client } = deps.chains[network];
  if (!existing) {
    // Held until it is due (the token executes it only in a block whose timestamp is after
    // validAfter): nothing reserved or sent now; the periodic sweep carries it again (facilitator.ts).
    const held = await heldOrTooLate(deps, record, validAfter.value, validBefore.value);
    if (held) return;
    const fromBlock = deps.chains[network].blocks.recentHead(Date.now()) ?? await client.getBlockNumber();
    const now = deps.clock();
    const reserved = await underPayerLock(payer, () => deps.authorizations.reserve({
      // Keyed by network, token, payer and nonce (its id), the nonce on chain beside it.
      nonce: record.id, chainNonce: record.nonce, network, reference: `x402:${record.id}`, contractAddress: asset, fromAddress: payer, toAddress: payTo,
      value: record.amount, validBefore: clockSeconds(validBefore.value), fromBlock: exactNumber(fromBlock), createdAt: now, updatedAt: now,
    }, {
      balance: () => client.readContract({ address: asset, abi: vixpTokenAbi, functionName: 'balanceOf', args: [payer] }),
    }));
    if (reserved === 'insufficient') {
      await finishSettlement(deps, record, { status: 'failed', errorReason: 'insufficient_funds' });
      return;
    }
  } else if (existing.status !== 'reserved') {
    return; // Journaled (or ended) already: the relayer's recovery and the observation finish it.
  }
  // An ERC-6492 payer's wallet, deployed first when it is not yet (deploy-wallet.ts); the transfer waits for it.
  const deployment = await deployPayerWallet(deps, network, payer, record.signature as Hex);
  if (deployment === 'pending') return;
  if (deployment !== 'ready') {
    await deps.authorizations.release(record.id);
    await finishSettlement(deps, record, { status: 'failed', errorReason: deployment.failed });
    return;
  }
  let result;
  try {
    // A plain account's signature rides the batch; a contract account's goes alone (contract-signature.ts).
    const authorization = { from: payer, to: payTo, value: value.value, validAfter: validAfter.value, validBefore: validBefore.value, nonce: record.nonce as Hex };
    const { signature, alone } = await settlementSignature(deps, network, authorization, asset, record.signature as Hex);
    result = await deps.relayer.settle(network, deps.contracts[network].settlement, {
      token: asset, ...authorization, signature, key: record.id, ...(alone && { alone }),
    });
  } catch (error) {
    // Not journaled by this call: nothing sent by it. Left accepted; the sweep sends it again while it is still reserved.
    deps.logger.warn({ network, nonce: record.nonce, reason: errorSummary(error) }, 'x402 settlement not sent yet; retried by the sweep');
    return;
  }
  if (result.status === 'confirmed') {
    await deps.authorizations.finish(record.id, 'used', { txHash: result.txHash }, deps.clock());
    await finishSettlement(deps, record, { status: 'settled', txHash: result.txHash });
    return;
  }
  if (result.status === 'failed') {
    // Mined without executing it (skipped in the batch, or a batch of one reverted). Whoever used the
    // nonce meanwhile (the payer, or anyone holding the signature) decides; otherwise it failed here.
    const used = await client.readContract({ address: asset, abi: vixpTokenAbi, functionName: 'authorizationState', args: [payer, record.nonce as Hex] });
    if (!used) await finishSettlement(deps, record, { status: 'failed', errorReason: 'invalid_transaction_state', txHash: result.txHash });
  }
}

/**
 * True when the settlement is not to be sent now: held (not due yet: the sweep looks again; one
 * accepted by an earlier version whose validAfter lies beyond what is held now is failed), or too
 * late (validBefore within a second: no block could still execute it, and a reverted transaction is
 * gas the platform pays; failed, nothing sent).
 */
async function heldOrTooLate(deps: X402Deps, record: X402SettlementRecord, validAfter: bigint, validBefore: bigint): Promise<boolean> {
  const nowS = clockSecondsOf(deps.clock());
  if (nowS < dueAtSeconds(validAfter)) {
    if (validAfter > nowS + (deps.maxHoldSeconds ?? defaultMaxHoldSeconds)) {
      await finishSettlement(deps, record, { status: 'failed', errorReason: 'invalid_exact_evm_payload_authorization_valid_after' });
    }
    return true;
  }
  if (validBefore <= nowS + 1n) {
    await finishSettlement(deps, record, { status: 'failed', errorReason: 'invalid_exact_evm_payload_authorization_valid_before' });
    return true;
  }
  return false;
}
