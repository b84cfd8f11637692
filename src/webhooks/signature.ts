import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header every delivery carries (docs/webhooks.md). */
export const signatureHeader = 'Vixpay-Signature';

/** Lowercase hex HMAC-SHA256 of `<t>.<raw body>` under one secret. */
export function signPayload(secret: string, timestamp: number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${rawBody}`).digest('hex');
}

/**
 * `t=<unix seconds>,v1=<hex>`: one `v1` per secret that signs, the current one first (after a
 * rotation the previous secret signs too until its overlap ends, so a receiver may switch late).
 */
export function signatureHeaderValue(secrets: string[], timestamp: number, rawBody: string): string {
  return [`t=${timestamp}`, ...secrets.map((secret) => `v1=${signPayload(secret, timestamp, rawBody)}`)].join(',');
}

export interface VerifyOptions {
  /** Unix seconds now; default the system clock. */
  now?: number;
  /** Oldest timestamp accepted, in seconds; default 300 (5 minutes). */
  toleranceSeconds?: number;
}

/**
 * What a receiver runs: true when one `v1` of the header is the HMAC of `<t>.<rawBody>` under
 * `secret` and `t` is not older than the tolerance (a replay of an old delivery is refused).
 */
export function verifySignature(secret: string, header: string, rawBody: string, options: VerifyOptions = {}): boolean {
  const parts = header.split(',').map((part) => part.split('=', 2) as [string, string | undefined]);
  const timestamp = Number(parts.find(([key]) => key === 't')?.[1]);
  if (!Number.isInteger(timestamp)) return false;
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (now - timestamp > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signPayload(secret, timestamp, rawBody), 'hex');
  return parts.some(([key, value]) => key === 'v1' && value !== undefined && /^[0-9a-f]{64}$/.test(value)
    && timingSafeEqual(Buffer.from(value, 'hex'), expected));
}
