import type { Registry } from 'prom-client';
import type { Config } from '../config/config.ts';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Logger } from '#shared/logger.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { WebhookRepository } from '../store/webhook-repository.ts';
import { retryWindowMs } from './backoff.ts';
import { createWebhookDelivery, type ResCodeOf } from './webhook-delivery.ts';
import { createWebhookMetrics } from './webhook-metrics.ts';

export interface WebhookWorkerDeps {
  config: Pick<Config, 'webhookPollMs' | 'webhookRetryInitialMs' | 'webhookRetryMaxMs' | 'webhookTimeoutMs'>;
  repository: WebhookRepository;
  vault: Pick<KeyVault, 'decrypt'>;
  clock: Clock;
  logger: Logger;
  registry: Registry;
  resCodeOf: ResCodeOf;
}

/**
 * The server's webhook sender: every WEBHOOK_POLL_SECONDS it attempts the deliveries that are due
 * (never two runs at once in one instance; instances share the work through leases). `stop` cuts
 * attempts in flight short (due again at once) and waits for the run to end.
 */
export function startWebhookWorker(deps: WebhookWorkerDeps): { stop(): Promise<void> } {
  const { config } = deps;
  const delivery = createWebhookDelivery({
    repository: deps.repository, vault: deps.vault, clock: deps.clock, logger: deps.logger,
    policy: { initialMs: config.webhookRetryInitialMs, maxMs: config.webhookRetryMaxMs, windowMs: retryWindowMs },
    timeoutMs: config.webhookTimeoutMs, batchSize: 20, resCodeOf: deps.resCodeOf,
    metrics: createWebhookMetrics(deps.registry, deps.repository),
  });
  const loop = runPeriodically(() => delivery.runOnce().catch((err: unknown) => deps.logger.warn({ err }, 'webhook delivery run failed')), config.webhookPollMs);
  return {
    async stop() {
      delivery.abort();
      await loop.stop();
    },
  };
}
