import { z } from 'zod';
import { getAddress, type Address, type Hex } from 'viem';
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';

/** An `exact` EVM payload's EIP-3009 authorization, as the x402 `exact` scheme for EVM sends it. */
const exactEvmPayload = z.object({
  authorization: z.object({
    from: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    to: z.string().regex(/^0x[0-9a-fA-F]{40}$/),
    value: z.string().regex(/^\d{1,78}$/),
    validAfter: z.string().regex(/^\d{1,20}$/),
    validBefore: z.string().regex(/^\d{1,20}$/),
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  }),
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})+$/).max(20_000),
});

export interface ExactAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** Lowercase. */
  nonce: Hex;
}

export type ParsedRequest =
  | { ok: true; payload: PaymentPayload; requirements: PaymentRequirements; authorization: ExactAuthorization; signature: Hex }
  | { ok: false; reason: string; message: string; payer?: string };

/**
 * The body of POST /x402/verify and /x402/settle (`{ x402Version, paymentPayload, paymentRequirements }`),
 * checked with the published x402 v2 schemas, then the `exact` EVM payload's fields. A refusal
 * carries the specification's reason (`invalid_x402_version`, `invalid_payload`, `invalid_payment_requirements`).
 */
export function parseRequest(body: unknown): ParsedRequest {
  const envelope = z.object({ x402Version: z.number().optional(), paymentPayload: z.unknown(), paymentRequirements: z.unknown() }).safeParse(body);
  if (!envelope.success) return { ok: false, reason: 'invalid_payload', message: 'the body is { x402Version, paymentPayload, paymentRequirements }' };
  const version = envelope.data.x402Version ?? (envelope.data.paymentPayload as { x402Version?: unknown } | undefined)?.x402Version;
  if (version !== 2) return { ok: false, reason: 'invalid_x402_version', message: 'this facilitator speaks x402 version 2' };
  const requirements = PaymentRequirementsV2Schema.safeParse(envelope.data.paymentRequirements);
  if (!requirements.success) return { ok: false, reason: 'invalid_payment_requirements', message: issues(requirements.error.issues) };
  const payload = PaymentPayloadV2Schema.safeParse(envelope.data.paymentPayload);
  if (!payload.success) return { ok: false, reason: 'invalid_payload', message: issues(payload.error.issues) };
  const exact = exactEvmPayload.safeParse(payload.data.payload);
  if (!exact.success) return { ok: false, reason: 'invalid_payload', message: `payload: ${issues(exact.error.issues)}` };
  const { authorization: a, signature } = exact.data;
  return {
    ok: true, payload: payload.data as PaymentPayload, requirements: requirements.data as PaymentRequirements, signature: signature as Hex,
    authorization: {
      from: getAddress(a.from), to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore),
      nonce: a.nonce.toLowerCase() as Hex,
    },
  };
}

const issues = (list: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>) =>
  list.slice(0, 3).map((i) => `${i.path.map(String).join('.') || 'value'}: ${i.message}`).join('; ');
