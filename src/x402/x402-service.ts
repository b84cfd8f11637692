import type { X402Facilitator } from './facilitator.ts';

/** What the x402 routes stand on, built by the composition root (src/compose/x402.ts). */
export interface X402Service {
  facilitator: Pick<X402Facilitator, 'supported' | 'verify' | 'settle' | 'status' | 'receipt' | 'authenticate'>;
  /** Takes one request of the key's allowance; false when it has none left. */
  takeRequest(keyId: string, ratePerSecond: number): boolean;
  /** How long a settle waits for the chain unless the request's `Prefer: wait=<seconds>` asks for less. */
  settleWaitMs: number;
}
