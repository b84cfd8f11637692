import type { VerifyResponse } from '@x402/core/types';
import type { X402Deps } from './x402-deps.ts';
import { parseRequest } from './parse-request.ts';
import { networkOfX402 } from './x402-networks.ts';
import { bindingRefusal } from './settle-payment.ts';
import { authorizationKey } from '../chain/mined-receipt.ts';

/** The id of the settlement a verify or settle body names (X402SettlementRecord.id), undefined when it names none of our networks. */
export function settlementIdOf(deps: Pick<X402Deps, 'chains'>, body: unknown): string | undefined {
  const parsed = parseRequest(body);
  if (!parsed.ok) return undefined;
  const network = networkOfX402(deps.chains, parsed.requirements.network);
  return network && authorizationKey(network, parsed.bound.asset, parsed.authorization.from, parsed.authorization.nonce);
}

/**
 * POST /x402/verify of a payment presented again: the buyer whose request was answered
 * `settlement_pending` (by the resource server, with 402, after its settle answered it pending) sends
 * the same PAYMENT-SIGNATURE again. It is valid while no settle has answered it settled: exactly the
 * payment accepted (its network, payer, signed authorization, payTo, amount, asset), not failed; the
 * resource server's settle then waits for that one settlement (never a second transfer) and serves
 * the buyer once it is mined. Once a settle has answered it settled it is valid again only under the
 * same payment id (the payment-identifier extension: the stored result of the same request);
 * otherwise undefined, and the ordinary verify refuses it as used.
 */
export async function repeatedPaymentVerdict(
  deps: Pick<X402Deps, 'chains' | 'settlements' | 'answers'>, body: unknown, sameRequest: boolean,
): Promise<VerifyResponse | undefined> {
  if (!deps.answers) return undefined;
  const parsed = parseRequest(body);
  if (!parsed.ok) return undefined;
  const { payload, requirements, bound, authorization, signature } = parsed;
  if (requirements.scheme !== 'exact' || payload.accepted.scheme !== 'exact' || payload.accepted.network !== requirements.network) return undefined;
  const network = networkOfX402(deps.chains, requirements.network);
  if (!network) return undefined;
  const id = authorizationKey(network, bound.asset, authorization.from, authorization.nonce);
  const record = await deps.settlements.find(id);
  if (!record || record.status === 'failed' || bindingRefusal(record, network, bound, authorization, signature)) return undefined;
  if (!sameRequest && await deps.answers.answered(id)) return undefined;
  return { isValid: true, payer: authorization.from };
}
