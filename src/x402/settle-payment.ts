import { isAddressEqual, type Address } from 'viem';
import type { SettleResponse } from '@x402/core/types';
import type { X402SettlementRecord } from '../store/x402-settlement-repository.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { X402Deps } from './x402-deps.ts';
import { formatUint256, parseUint256 } from '#shared/uint256.ts';
import { parseRequest, type BoundRequirements, type ExactAuthorization } from './parse-request.ts';
import { verifyPayment } from './verify-payment.ts';
import { observeSettlement } from './observe-settlement.ts';
import { issueReceipt } from './finish-settlement.ts';
import { networkOfX402, x402NetworkOf } from './x402-networks.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';
import { clockSecondsOf, dueAtSeconds } from './valid-window.ts';

/** The settlements this process is carrying to the chain (facilitator.ts). */
export interface Carrier {
  /** Starts carrying it unless this process already is; resolves when that attempt ends. */
  carry(record: X402SettlementRecord): Promise<void>;
  /** The attempt carrying the settlement with this id, if this process is carrying it. */
  running(id: string): Promise<void> | undefined;
}

export interface SettleOptions {
  /** The facilitator key of the resource server asking. */
  keyId: string;
  /** How long to wait for the chain before answering the pending form. */
  waitMs: number;
}

/** A settlement accepted but not sent this long after its last change is sent again by whoever sees it (the journal never includes it twice). */
export const resendAfterMs = 5_000;

/** `pending`: the spec's `settlement_pending` answer (not mined yet): ask again, or GET the status. */
export type SettleAnswer = { response: SettleResponse; pending: boolean };

/**
 * POST /x402/settle. A payment seen for the first time is verified (verify-payment.ts) and accepted:
 * recorded with its signature, then carried to the chain in the relayer's next batch. The same
 * authorization (its nonce) is accepted once, whoever asks and however often: a repeated settle,
 * concurrent or after a crash, waits for that one settlement and answers its transaction. Answers
 * within `waitMs`: success with the transaction once mined, a failure with the spec's reason, or
 * the pending form (`settlement_pending` and the transaction hash once it has one).
 */
export async function settlePayment(deps: X402Deps, carrier: Carrier, body: unknown, options: SettleOptions): Promise<SettleAnswer> {
  const parsed = parseRequest(body);
  const requestedNetwork = String((body as { paymentRequirements?: { network?: unknown } } | null)?.paymentRequirements?.network ?? '');
  if (!parsed.ok) return failure(parsed.reason, parsed.message, requestedNetwork, parsed.payer);
  const { payload, requirements, bound, authorization, signature } = parsed;
  // The network binds as at verify, before anything is looked up: an authorization settled on one
  // network is not a payment on another (nor under an `accepted` that names another).
  const network = networkOfX402(deps.chains, requirements.network);
  if (!network || payload.accepted.network !== requirements.network) {
    return failure('invalid_network', `network ${requirements.network} is not settled here (GET /x402/supported)`, requestedNetwork, authorization.from);
  }
  // A payment is its authorizer's nonce for this token on this network (EIP-3009): another payer's, or another network's, is another payment.
  const id = authorizationKey(network, bound.asset, authorization.from, authorization.nonce);
  let record = await deps.settlements.find(id);
  if (!record) {
    const { response, verified } = await verifyPayment(deps, body);
    if (!verified) {
      // Stryker disable next-line StringLiteral: equivalent, verify names the reason of every refusal (its own, the parser's, the published verifier's)
      const reason = response.invalidReason ?? 'invalid_payload';
      return failure(reason, response.invalidMessage ?? 'verification failed', requestedNetwork, authorization.from);
    }
    // Nothing is accepted while custody is down: a payment accepted now would be sent later by the
    // sweep, after its seller was answered 503 (docs/operations.md "The token lost while running").
    await deps.custody?.probe();
    const now = deps.clock();
    const accepted = await deps.settlements.accept({
      id, nonce: authorization.nonce, network: verified.network, payer: authorization.from, payTo: authorization.to, asset: verified.asset.address,
      amount: formatUint256(authorization.value), validBefore: formatUint256(authorization.validBefore), validAfter: formatUint256(authorization.validAfter), signature, keyId: options.keyId, createdAt: now, updatedAt: now,
    });
    record = await deps.settlements.find(id);
    // Stryker disable next-line ConditionalExpression,StringLiteral: unreachable, the row was just inserted or was there already (accept never inserts twice, rows are never deleted)
    if (!record) throw new Error(`x402 settlement ${id} neither accepted nor found`);
    // Stryker disable next-line ConditionalExpression: equivalent, a row another settle accepted meanwhile is carried by it, and carry joins that attempt (one per settlement in a process)
    if (accepted) void carrier.carry(record);
  }
  // Every binding again, against what was accepted (by this request or an earlier one): a settled
  // authorization answers its transaction only to the payment it is, never to other requirements.
  const refusal = bindingRefusal(record, network, bound, authorization, signature);
  if (refusal) return failure(refusal.reason, refusal.message, requestedNetwork, authorization.from);
  return awaitOutcome(deps, carrier, record, options.waitMs);
}

/** Why a request is not the accepted settlement `record` (its network, payer, signed authorization, payTo, amount, asset); undefined when it is. */
export function bindingRefusal(
  record: X402SettlementRecord, network: NetworkName, bound: BoundRequirements, authorization: ExactAuthorization, signature: string,
): { reason: string; message: string } | undefined {
  if (record.network !== network) return { reason: 'invalid_network', message: 'this authorization was settled on another network' };
  if (record.payer !== authorization.from || record.signature.toLowerCase() !== signature.toLowerCase()) {
    return { reason: 'invalid_exact_evm_nonce_already_used', message: 'another authorization with this nonce was settled' };
  }
  const amount = parseUint256(record.amount);
  const validBefore = parseUint256(record.validBefore);
  const validAfter = parseUint256(record.validAfter);
  // The same signature over other fields is not a signature of them.
  if (!isAddressEqual(authorization.to, record.payTo as Address) || !amount.ok || authorization.value !== amount.value
    || !validBefore.ok || authorization.validBefore !== validBefore.value || !validAfter.ok || authorization.validAfter !== validAfter.value) {
    return { reason: 'invalid_exact_evm_signature', message: 'the signature is not of this authorization' };
  }
  if (!isAddressEqual(bound.payTo, record.payTo as Address)) return { reason: 'invalid_exact_evm_recipient_mismatch', message: 'this authorization pays another payTo' };
  if (bound.amount !== amount.value || !isAddressEqual(bound.asset, record.asset as Address)) {
    return { reason: 'invalid_exact_evm_payload_authorization_value_mismatch', message: 'this authorization pays another amount or asset' };
  }
  return undefined;
}

/** Waits (up to `waitMs`) for an accepted settlement to end; sends it again when nobody is carrying it. */
export async function awaitOutcome(deps: X402Deps, carrier: Carrier, accepted: X402SettlementRecord, waitMs: number): Promise<SettleAnswer> {
  const network = x402NetworkOf(deps.chains, accepted.network as NetworkName);
  const deadline = Date.now() + waitMs;
  for (;;) {
    const record = (await deps.settlements.find(accepted.id)) ?? accepted;
    if (record.status === 'settled') {
      // Answered with its receipt kept: whoever recorded it issued it (this waits for it), or this does.
      await carrier.running(record.id);
      await issueReceipt(deps, record.id);
      // Stryker disable next-line StringLiteral: equivalent, a settled row always has its transaction (finishSettlement records it)
      return { response: { success: true, payer: record.payer, transaction: record.txHash ?? '', network, amount: record.amount }, pending: false };
    }
    if (record.status === 'failed') {
      // Stryker disable next-line StringLiteral: equivalent, a failed row always has its reason (finishSettlement records it)
      const reason = record.errorReason ?? 'invalid_transaction_state';
      return failure(reason, 'the settlement failed', network, record.payer, record.txHash ?? '');
    }
    const state = await observeSettlement(deps, record);
    if (state === 'ended') continue;
    // Stryker disable next-line ConditionalExpression: equivalent, carrying one in flight sends nothing (carrySettlement returns once its authorization is no longer reserved)
    if (state === 'resend') {
      // Not sent yet and custody down: 503 (custody.unavailable), never a pending that waits on a send that cannot happen.
      await deps.custody?.probe();
      // Sent again once 5 s old on the platform's clock, which wrote updatedAt (as the sweep reads it),
      // or as soon as a payment held at acceptance is due; carry joins the attempt when this process is carrying it already.
      if (deps.clock() - record.updatedAt >= resendAfterMs || becameDue(record, deps.clock())) void carrier.carry(record);
    }
    const left = deadline - Date.now();
    // Stryker disable next-line EqualityOperator: equivalent, with exactly 0 ms left one more look (a sleep of 0) answers the outcome then, as the next settle would
    if (left <= 0) break;
    await Promise.race([carrier.running(record.id) ?? sleep(250), sleep(Math.min(left, 250))]);
  }
  const authorization = await deps.authorizations.find(accepted.id);
  return {
    response: {
      success: false, errorReason: 'settlement_pending', errorMessage: `${pendingState(accepted, authorization?.status, deps.clock())}: POST /settle again or GET /x402/settlements/{payer}/{nonce}`,
      payer: accepted.payer, transaction: authorization?.txHash ?? '', network,
    },
    pending: true,
  };
}

/** Accepted while not due yet (held), and due now: whoever waits on it sends it. */
function becameDue(record: X402SettlementRecord, nowMs: number): boolean {
  const validAfter = parseUint256(record.validAfter);
  if (!validAfter.ok) return false;
  const dueMs = dueAtSeconds(validAfter.value) * 1000n;
  return dueMs > BigInt(record.createdAt) && dueMs <= BigInt(nowMs);
}

/** What a pending answer says of the payment: sent only once its authorization was journaled. */
function pendingState(record: X402SettlementRecord, status: string | undefined, nowMs: number): string {
  if (status !== undefined && status !== 'reserved') return 'sent, not mined yet';
  const validAfter = parseUint256(record.validAfter);
  if (validAfter.ok && clockSecondsOf(nowMs) < dueAtSeconds(validAfter.value)) return `accepted, not sent yet: held until its validAfter (${validAfter.value}) has passed`;
  return 'accepted, not sent yet';
}

function failure(errorReason: string, errorMessage: string, network: string, payer?: string, transaction = ''): SettleAnswer {
  return { response: { success: false, errorReason, errorMessage, transaction, network: network as SettleResponse['network'], ...(payer !== undefined && { payer }) }, pending: false };
}

// Stryker disable next-line ArrowFunction: equivalent, a sleep that resolves at once makes the wait poll the store without rest; the answers are the same
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
