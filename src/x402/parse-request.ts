import { z } from 'zod';
import type { Address, Hex } from 'viem';
import { PaymentPayloadV2Schema, PaymentRequirementsV2Schema } from '@x402/core/schemas';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { ExactPermit2Payload } from '@x402/evm';
import { parseAddress, parseUint256, type Parsed } from '#shared/uint256.ts';

/** Refines a zod field with one of the shared parsers (#shared/uint256.ts), its refusal as the issue. */
const parsedBy = <T>(parse: (input: unknown) => Parsed<T>) => z.unknown().transform((input, context): T => {
  const parsed = parse(input);
  if (parsed.ok) return parsed.value;
  context.addIssue({ code: 'custom', message: parsed.reason });
  return z.NEVER;
});
const uint256 = parsedBy(parseUint256);
const address = parsedBy(parseAddress);

/**
 * An `exact` EVM payload's EIP-3009 authorization, as the x402 `exact` scheme for EVM sends it: its
 * numbers in the canonical uint256 form (docs/x402.md#numbers), read exactly as `bigint`.
 */
const exactEvmPayload = z.object({
  authorization: z.object({
    from: address, to: address, value: uint256, validAfter: uint256, validBefore: uint256,
    nonce: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  }),
  signature: z.string().regex(/^0x([0-9a-fA-F]{2})+$/).max(20_000),
});

/** What the requirements bind, beyond the published schema: the amount a canonical uint256, payTo and asset addresses. */
const boundRequirements = z.object({ amount: uint256, payTo: address, asset: address });

export interface ExactAuthorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  /** Lowercase. */
  nonce: Hex;
}

/** The requirements' amount, payee and asset as parsed (the published type keeps them as strings). */
export interface BoundRequirements {
  amount: bigint;
  /** Checksummed. */
  payTo: Address;
  asset: Address;
}

export type ParsedRequest =
  | { ok: true; payload: PaymentPayload; requirements: PaymentRequirements; bound: BoundRequirements; authorization: ExactAuthorization; signature: Hex }
  | { ok: false; reason: string; message: string; payer?: string };

/**
 * The body of POST /x402/verify and /x402/settle (`{ x402Version, paymentPayload, paymentRequirements }`),
 * checked with the published x402 v2 schemas, then the `exact` EVM payload's fields and what the
 * requirements bind (amount, payTo, asset), every number with the one uint256 parser. A refusal
 * carries the specification's reason (`invalid_x402_version`, `invalid_payload`, `invalid_payment_requirements`).
 */
export function parseRequest(body: unknown): ParsedRequest {
  const envelope = z.object({ x402Version: z.number().optional(), paymentPayload: z.unknown(), paymentRequirements: z.unknown() }).safeParse(body);
  if (!envelope.success) return { ok: false, reason: 'invalid_payload', message: 'the body is { x402Version, paymentPayload, paymentRequirements }' };
  const version = envelope.data.x402Version ?? (envelope.data.paymentPayload as { x402Version?: unknown } | undefined)?.x402Version;
  if (version !== 2) return { ok: false, reason: 'invalid_x402_version', message: 'this facilitator speaks x402 version 2' };
  const requirements = PaymentRequirementsV2Schema.safeParse(envelope.data.paymentRequirements);
  if (!requirements.success) return { ok: false, reason: 'invalid_payment_requirements', message: issues(requirements.error.issues) };
  const bound = boundRequirements.safeParse(requirements.data);
  if (!bound.success) return { ok: false, reason: 'invalid_payment_requirements', message: issues(bound.error.issues) };
  const payload = PaymentPayloadV2Schema.safeParse(envelope.data.paymentPayload);
  if (!payload.success) return { ok: false, reason: 'invalid_payload', message: issues(payload.error.issues) };
  if ('permit2Authorization' in payload.data.payload) return permit2Refusal(payload.data.payload);
  const exact = exactEvmPayload.safeParse(payload.data.payload);
  if (!exact.success) return { ok: false, reason: 'invalid_payload', message: `payload: ${issues(exact.error.issues)}` };
  const { authorization: a, signature } = exact.data;
  return {
    ok: true, payload: payload.data as PaymentPayload, requirements: requirements.data as PaymentRequirements, bound: bound.data, signature: signature as Hex,
    authorization: { ...a, nonce: a.nonce.toLowerCase() as Hex },
  };
}

/**
 * The `exact` scheme's Permit2 form (`permit2Authorization`, settled through the x402 Permit2 proxy) is not
 * settled here (docs/x402.md#permit2): refused with the published facilitator's reason for a payload type it
 * does not handle, naming the payer when the form names one, so neither side reads it as a malformed authorization.
 * The test is @x402/evm's `isPermit2Payload` (a `permit2Authorization` key), written out: that guard is exported
 * only from the package's root, whose import adds 100-300 ms to the platform's start.
 */
function permit2Refusal(payload: Record<string, unknown>): ParsedRequest {
  const authorization = payload.permit2Authorization as Partial<ExactPermit2Payload['permit2Authorization']> | null;
  const from = parseAddress(authorization?.from);
  return {
    ok: false, reason: 'unsupported_payload_type', ...(from.ok ? { payer: from.value } : {}),
    message: 'the exact scheme\'s Permit2 form (permit2Authorization) is not settled by this facilitator: pay with the EIP-3009 form (authorization) of a token listed in GET /x402/supported',
  };
}

const issues = (list: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }>) =>
  list.slice(0, 3).map((i) => `${i.path.map(String).join('.') || 'value'}: ${i.message}`).join('; ');
