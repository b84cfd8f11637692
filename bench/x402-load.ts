// The x402 load of `--only=x402` (bench/x402-settles.ts), run in the load client's process: payers
// sign with the published client (`@x402/evm/exact/client`, 2.27.0) and a resource server's two calls
// follow, verify then settle, at Poisson arrivals. The facilitator is either the platform over HTTP
// (`/x402/verify`, `/x402/settle` with a facilitator key) or the published `exact` facilitator
// (`@x402/evm/exact/facilitator`), which sends one `transferWithAuthorization` per payment from a pool
// of signer accounts, one settle at a time each: the public facilitators' way.
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { createWalletClient, http, publicActions, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { seeded, wallClock } from './arrivals.ts';

export type X402Facilitator =
  | { kind: 'platform'; url: string; apiKey: string }
  | { kind: 'published'; rpcUrl: string; chainId: number; signerKeys: Hex[] };

/** `payers.length` payments, one per payer, arriving as a Poisson process at `ratePerSecond`. */
export interface PoissonX402Job {
  kind: 'poisson-x402';
  facilitator: X402Facilitator;
  payers: Hex[];
  requirements: PaymentRequirements;
  ratePerSecond: number;
  seed: number;
}

/** One payment: when its settle left and was answered (epoch ms), and what it answered. */
export interface TimedSettle {
  sentAt: number;
  answeredAt: number;
  /** Verify and settle, from the signed payment to the settle's answer. */
  verifyAndSettleMs: number;
  success: boolean;
  transaction: string;
  errorReason?: string;
}

export interface PoissonX402Result {
  settles: TimedSettle[];
  elapsedMs: number;
}

interface Facilitator {
  verify(paymentPayload: PaymentPayload, requirements: PaymentRequirements): Promise<{ isValid: boolean; invalidReason?: string }>;
  settle(paymentPayload: PaymentPayload, requirements: PaymentRequirements): Promise<{ success: boolean; transaction: string; errorReason?: string }>;
}

function platformFacilitator(url: string, apiKey: string): Facilitator {
  const post = async (path: string, paymentPayload: PaymentPayload, paymentRequirements: PaymentRequirements) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements }),
    });
    return response.json() as Promise<any>;
  };
  return { verify: (p, r) => post('/verify', p, r), settle: (p, r) => post('/settle', p, r) };
}

/** The published facilitator, each settle on a signer account of its own (waiting for a free one). */
function publishedFacilitator(rpcUrl: string, chainId: number, signerKeys: Hex[]): Facilitator {
  const chain = { ...foundry, id: chainId };
  const schemes = signerKeys.map((key) => {
    const client = createWalletClient({ account: privateKeyToAccount(key), chain, transport: http(rpcUrl) }).extend(publicActions);
    return new ExactEvmFacilitatorScheme(toFacilitatorEvmSigner({ ...client, address: client.account.address } as never));
  });
  const free = [...schemes];
  const waiting: Array<(scheme: ExactEvmFacilitatorScheme) => void> = [];
  const take = () => new Promise<ExactEvmFacilitatorScheme>((resolve) => { const scheme = free.pop(); if (scheme) resolve(scheme); else waiting.push(resolve); });
  const give = (scheme: ExactEvmFacilitatorScheme) => { const next = waiting.shift(); if (next) next(scheme); else free.push(scheme); };
  return {
    verify: (p, r) => schemes[0]!.verify(p, r),
    async settle(p, r) {
      const scheme = await take();
      try { return await scheme.settle(p, r); } finally { give(scheme); }
    },
  };
}

/** Open loop: each arrival signs, verifies and settles at its time, whatever the earlier ones are doing. */
export async function poissonX402(job: PoissonX402Job): Promise<PoissonX402Result> {
  const facilitator = job.facilitator.kind === 'platform'
    ? platformFacilitator(job.facilitator.url, job.facilitator.apiKey)
    : publishedFacilitator(job.facilitator.rpcUrl, job.facilitator.chainId, job.facilitator.signerKeys);
  const random = seeded(job.seed);
  const result: PoissonX402Result = { settles: [], elapsedMs: 0 };
  const begin = performance.now();
  const running: Array<Promise<void>> = [];
  let next = 0;
  for (const payer of job.payers) {
    next += -Math.log(1 - random()) * (1000 / job.ratePerSecond);
    const wait = begin + next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    running.push((async () => {
      const { payload } = await new ExactEvmClientScheme(privateKeyToAccount(payer)).createPaymentPayload(2, job.requirements);
      const paymentPayload: PaymentPayload = { x402Version: 2, accepted: job.requirements, payload, resource: { url: 'http://bench.test/weather', description: '', mimeType: '' } };
      const t0 = performance.now();
      try {
        const verified = await facilitator.verify(paymentPayload, job.requirements);
        if (!verified.isValid) throw new Error(`verify: ${verified.invalidReason}`);
        const sentAt = wallClock();
        const settled = await facilitator.settle(paymentPayload, job.requirements);
        result.settles.push({
          sentAt, answeredAt: wallClock(), verifyAndSettleMs: performance.now() - t0, success: settled.success === true, transaction: settled.transaction ?? '',
          ...(settled.errorReason && { errorReason: settled.errorReason }),
        });
      } catch (error) {
        const at = wallClock();
        result.settles.push({ sentAt: at, answeredAt: at, verifyAndSettleMs: performance.now() - t0, success: false, transaction: '', errorReason: String((error as Error).message ?? error) });
      }
    })());
  }
  await Promise.all(running);
  result.elapsedMs = performance.now() - begin;
  return result;
}
