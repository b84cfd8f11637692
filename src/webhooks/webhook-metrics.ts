import { Counter, Gauge, type Registry } from 'prom-client';
import type { WebhookRepository } from '../store/webhook-repository.ts';

/**
 * The webhook metrics, on the platform's registry: attempts by outcome (`delivered`, `retry`,
 * `gave_up`) and, read at scrape time, deliveries by status (`pending` is the outbox backlog).
 */
export function createWebhookMetrics(registry: Registry, repository: Pick<WebhookRepository, 'counts'>) {
  return {
    deliveries: new Counter({
      name: 'vixpay_webhook_delivery_attempts_total', help: 'Webhook delivery attempts by this instance, by outcome (delivered, retry, gave_up)',
      labelNames: ['outcome'] as const, registers: [registry],
    }),
    backlog: new Gauge({
      name: 'vixpay_webhook_deliveries', help: 'Webhook deliveries in the store, by status (pending: the outbox backlog; failed: given up after 24 hours)',
      labelNames: ['status'] as const, registers: [registry],
      async collect() {
        const counts = await repository.counts();
        for (const [status, value] of Object.entries(counts)) this.set({ status }, value);
      },
    }),
  };
}

export type WebhookMetrics = ReturnType<typeof createWebhookMetrics>;
