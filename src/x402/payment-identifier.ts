import { PAYMENT_IDENTIFIER, extractAndValidatePaymentIdentifier } from '@x402/extensions/payment-identifier';
import type { PaymentPayload } from '@x402/core/types';
import { sha256Hex } from '#shared/hash.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';

/** The extension's key, as `@x402/extensions` 2.27.0 names it: listed in GET /x402/supported `extensions`. */
export const paymentIdentifierKey = PAYMENT_IDENTIFIER;

/** An id is bound to its request this long (as Stripe keeps an idempotency key): then it may name another. */
export const paymentIdTtlMs = 24 * 3_600_000;

/** What the body of a verify or settle says of the payment-identifier extension. */
export type PaymentIdentifierOf =
  | { kind: 'none' }
  | { kind: 'invalid'; message: string }
  /** `scope`: whose id it is (the facilitator key's store); `fingerprint`: of the request it names. */
  | { kind: 'id'; scope: string; id: string; fingerprint: string };

/** The facilitator key asking: ids are its store's (`tid`), or its own when it names no store. */
export interface IdScope { keyId: string; tid?: string | null | undefined }

/**
 * The payment-identifier extension of `body.paymentPayload` (`extensions["payment-identifier"].info.id`),
 * checked as `@x402/extensions` checks it (16–128 characters of `[A-Za-z0-9_-]`, `info.required` a
 * boolean, the echoed schema): absent, invalid (refused with the reason), or an id with the fingerprint
 * of the whole request (the payment payload and the requirements), which the same request repeated has
 * and another request under the same id has not.
 */
export function paymentIdentifierOf(body: unknown, scope: IdScope): PaymentIdentifierOf {
  // A body of JSON: whatever is not an object here has no such field.
  const request = (body ?? {}) as { paymentPayload?: { extensions?: Record<string, unknown> | null } | null; paymentRequirements?: unknown };
  const payload = request.paymentPayload;
  if (payload?.extensions?.[PAYMENT_IDENTIFIER] === undefined) return { kind: 'none' };
  const { id, validation } = extractAndValidatePaymentIdentifier(payload as PaymentPayload);
  // Stryker disable next-line ArrayDeclaration: equivalent, @x402/extensions names at least one error of an invalid extension
  if (!validation.valid) return { kind: 'invalid', message: `payment-identifier: ${(validation.errors ?? []).join('; ')}` };
  if (id === null) return { kind: 'none' };
  return {
    kind: 'id', id, scope: scope.tid ? `x402:tid:${scope.tid}` : `x402:key:${scope.keyId}`,
    fingerprint: sha256Hex(canonicalJson({ paymentPayload: payload, paymentRequirements: request.paymentRequirements })),
  };
}

/** Where a payment id stands for a request naming it: free, bound to this request (and its final settle answer once known), or to another. */
export type PaymentIdState =
  | { kind: 'free' }
  | { kind: 'same'; answer?: unknown }
  | { kind: 'conflict' };

/** Where `id` stands, without binding it (verify writes nothing). */
export async function lookUpPaymentId(keys: IdempotencyRepository, id: Extract<PaymentIdentifierOf, { kind: 'id' }>, now: number): Promise<PaymentIdState> {
  const existing = await keys.find(id.scope, id.id);
  if (!existing || existing.expiresAt <= now) return { kind: 'free' };
  return stateOf(existing.fingerprint, existing.state === 'done' ? existing.outcome : null, id.fingerprint);
}

/** Binds `id` to this request unless it is bound already (of concurrent requests one binds it); answers where it then stands. */
export async function claimPaymentId(keys: IdempotencyRepository, id: Extract<PaymentIdentifierOf, { kind: 'id' }>, now: number): Promise<PaymentIdState & { claimed?: true }> {
  const claim = await keys.claim({ scope: id.scope, key: id.id, fingerprint: id.fingerprint, reference: null, createdAt: now, expiresAt: now + paymentIdTtlMs });
  if (claim.claimed) return { kind: 'free', claimed: true };
  return stateOf(claim.existing.fingerprint, claim.existing.state === 'done' ? claim.existing.outcome : null, id.fingerprint);
}

function stateOf(bound: string, outcome: string | null, fingerprint: string): PaymentIdState {
  if (bound !== fingerprint) return { kind: 'conflict' };
  return outcome === null ? { kind: 'same' } : { kind: 'same', answer: JSON.parse(outcome) as unknown };
}

/** JSON with every object's keys sorted: the same request, however its keys were ordered, has one fingerprint. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const fields = Object.keys(value).sort().filter((k) => (value as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${fields.join(',')}}`;
  }
  // undefined (an array's hole; an object's undefined fields are left out above) as JSON's null.
  return JSON.stringify(value ?? null);
}
