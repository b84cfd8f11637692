/**
 * The x402 facilitator (docs/x402.md) over the platform's relayer and store, and what its HTTP routes
 * need: a rate limit per facilitator key and the settle wait. The server finishes settlements left
 * accepted at start and then every 2 s, and issues the receipts settled ones lack (all at start, the
 * last hour's then).
 */
import { randomUUID } from 'node:crypto';
import type { Address } from 'viem';
import type { Clock } from '#shared/clock.ts';
import type { Faults } from '#shared/failpoints.ts';
import type { Logger } from '#shared/logger.ts';
import type { Metrics } from '#shared/metrics.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Store } from '../store/db.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { createX402SettlementRepository } from '../store/x402-settlement-repository.ts';
import { createFacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import { createX402SettleAnswerRepository } from '../store/x402-settle-answer-repository.ts';
import { createChainJournal } from '../store/chain-journal-repository.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import { createX402Facilitator } from '../x402/facilitator.ts';
import { createKeyRateLimit } from '../x402/key-rate-limit.ts';
import type { X402Service } from '../x402/x402-service.ts';
import type { ReceiptService } from '../receipts/receipt-service.ts';

/** A settle answers within this (less when the request's `Prefer: wait=N` asks): the published client waits 90 s. */
export const x402SettleWaitMs = 30_000;
const sweepMs = 2_000;

export async function composeX402(
  core: {
    store: Store; clock: Clock; logger: Logger; metrics: Metrics; chains: ChainClients; relayer: Relayer; contracts: PlatformContractsByNetwork;
    receipts: Pick<ReceiptService, 'x402Receipt' | 'issueX402Receipt' | 'x402SettledWithoutReceipt'>;
    /** `X402_EIP6492_FACTORIES`: the factories whose ERC-6492 wallets the facilitator deploys. */
    eip6492Factories: readonly Address[];
    /** `X402_MAX_HOLD_SECONDS`: how far ahead a held payment's validAfter may lie. */
    maxHoldSeconds: number;
    /** The HSM token (KEY_CUSTODY=pkcs11): a settle answers 503 while it is down. */
    custody?: { probe(): Promise<void> } | undefined;
    faults: Faults;
  },
  options: { server: boolean },
  cleanups: Array<() => Promise<void>>,
): Promise<X402Service> {
  const { store, clock } = core;
  const logger = core.logger.child({ component: 'x402' });
  const facilitator = createX402Facilitator({
    chains: core.chains, contracts: core.contracts, relayer: core.relayer, clock, logger,
    authorizations: createAuthorizationRepository(store.db, store.dialect === 'sqlite' ? 'process' : 'row'),
    settlements: createX402SettlementRepository(store.db), keys: createFacilitatorKeyRepository(store.db),
    settlementTokens: createSettlementTokenRepository(store.db),
    paymentIds: createIdempotencyRepository(store.db), answers: createX402SettleAnswerRepository(store.db),
    walletDeployments: { factories: core.eip6492Factories, journal: createChainJournal(store.db, randomUUID) }, faults: core.faults,
    maxHoldSeconds: BigInt(core.maxHoldSeconds), ...(core.custody && { custody: core.custody }),
    onOutcome: (network, outcome) => core.metrics.x402Settlements.inc({ network, outcome }),
    receipts: {
      issue: (nonce) => core.receipts.issueX402Receipt(nonce),
      missing: (since, limit) => core.receipts.x402SettledWithoutReceipt(since, limit),
      find: (nonce) => core.receipts.x402Receipt(nonce),
    },
  });
  if (options.server) {
    // After a crash: every settlement accepted and not finished is sent (or recorded) now, whoever retries.
    await facilitator.sweep(0, 0).catch((err: unknown) => logger.warn({ err }, 'x402 settlement sweep failed'));
    cleanups.push(runPeriodically(() => facilitator.sweep().catch((err: unknown) => logger.warn({ err }, 'x402 settlement sweep failed')), sweepMs).stop);
  }
  const rateLimit = createKeyRateLimit(clock);
  return {
    facilitator, takeRequest: (keyId, rate) => rateLimit.take(keyId, rate), settleWaitMs: x402SettleWaitMs,
  };
}
