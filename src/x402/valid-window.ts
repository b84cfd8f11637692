/**
 * The validity window of an EIP-3009 authorization as the facilitator judges it (docs/x402.md
 * "validAfter in the future"), in whole seconds as bigints: the values as signed, compared exactly
 * (a validAfter of 2^53 or 2^128 is a number like any other, never a timer's milliseconds). The
 * token executes an authorization only in a block with `validAfter < timestamp < validBefore`.
 */

/** Seconds an authorization must stay valid once it can be executed: the published verifier's margin (validBefore ≥ now + 6). */
export const settleMarginSeconds = 6n;

/** `X402_MAX_HOLD_SECONDS` when the deps name none (src/config/schema.ts has the same default). */
export const defaultMaxHoldSeconds = 600n;

/** The first second in which a block may execute it. */
export const dueAtSeconds = (validAfter: bigint): bigint => validAfter + 1n;

/** The platform's clock (epoch ms) in whole seconds. */
export const clockSecondsOf = (nowMs: number): bigint => BigInt(Math.floor(nowMs / 1000));

export interface WindowRefusal { reason: string; message: string }

/**
 * Why an authorization is refused for its window at `nowS`, or undefined: no second in which a block
 * could execute it; a validAfter further ahead than the platform holds (`maxHoldS`); or, once it
 * opens, under `settleMarginSeconds` left to settle it in (it would expire while being sent, and a
 * transaction that reverts is gas the platform pays).
 */
export function windowRefusal(validAfter: bigint, validBefore: bigint, nowS: bigint, maxHoldS: bigint): WindowRefusal | undefined {
  if (dueAtSeconds(validAfter) >= validBefore) {
    return { reason: 'invalid_exact_evm_payload_authorization_valid_after', message: 'validAfter must be at least 2 s before validBefore: no block can execute this authorization' };
  }
  if (validAfter > nowS + maxHoldS) {
    return {
      reason: 'invalid_exact_evm_payload_authorization_valid_after',
      message: `validAfter is more than ${maxHoldS} s ahead: this facilitator holds a payment at most that long (X402_MAX_HOLD_SECONDS)`,
    };
  }
  const opens = dueAtSeconds(validAfter) > nowS ? dueAtSeconds(validAfter) : nowS;
  if (validBefore < opens + settleMarginSeconds) {
    return { reason: 'invalid_exact_evm_payload_authorization_valid_before', message: `validBefore leaves under ${settleMarginSeconds} s to settle it in once it is valid` };
  }
  return undefined;
}
