/**
 * Work no request waits for: store webhooks sent from the events outbox, and the sweep of records
 * nobody can use any more (temp keys, idempotency keys, website-login requests).
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Metrics } from '#shared/metrics.ts';
import { domainErrorCodes, type DomainErrorCode } from '#shared/errors.ts';
import type { Store } from '../store/db.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import { createWebhookRepository } from '../store/webhook-repository.ts';
import type { WebsiteLoginService } from '../identity/website-login.ts';
import { startWebhookWorker } from '../webhooks/webhook-worker.ts';
import { resCodeByFamily } from '../payments/result-codes.ts';
import { scheduleRecordSweeps } from './record-sweeps.ts';

export function startRecordSweeps(
  config: Config, deps: { store: Store; clock: Clock; logger: Logger; tempKeys: WalletRepository; websiteLogins: WebsiteLoginService },
): { stop(): Promise<void> } {
  return scheduleRecordSweeps({
    tempKeys: deps.tempKeys, idempotencyKeys: createIdempotencyRepository(deps.store.db), websiteLogins: deps.websiteLogins,
    clock: deps.clock, logger: deps.logger, usedTempKeyGraceMs: config.tempKeyUsedGraceMs,
  }, config.sweepIntervalMs);
}

/** The server's webhook sender: each event's `res_code` is the one the POS was answered. */
export function startWebhooks(
  config: Config, deps: { store: Store; vault: KeyVault; clock: Clock; metrics: Metrics; logger: Logger },
): { stop(): Promise<void> } {
  return startWebhookWorker({
    config, repository: createWebhookRepository(deps.store.db, deps.store.dialect), vault: deps.vault, clock: deps.clock,
    registry: deps.metrics.registry, logger: deps.logger.child({ component: 'webhooks' }),
    resCodeOf: (code) => resCodeByFamily.payment[(domainErrorCodes as readonly string[]).includes(code) ? code as DomainErrorCode : 'internal'],
  });
}
