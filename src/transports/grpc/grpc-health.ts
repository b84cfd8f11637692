import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import type * as grpc from '@grpc/grpc-js';

/** The names `grpc.health.v1.Health` answers for: the whole server ("") and the payment service. */
export const healthCheckedServices = ['', 'g00.payments.v2.PaymentsService'] as const;

export interface PaymentsHealth {
  /** Every name answers SERVING: the server is bound and takes calls. */
  serving(): void;
  /** Every name answers NOT_SERVING; open `Watch` streams are told at once, before the server closes. */
  notServing(): void;
}

/**
 * The standard health service (grpc/grpc `doc/health-checking.md`), so load balancers, Kubernetes
 * probes and grpcurl see the payment server's state without knowing our `.proto`. It answers
 * NOT_SERVING until `serving()`; any other name answers NOT_FOUND.
 */
export function addHealthService(server: grpc.Server): PaymentsHealth {
  const health = new HealthImplementation(Object.fromEntries(healthCheckedServices.map((name) => [name, 'NOT_SERVING'])));
  health.addToServer(server);
  const setEvery = (status: ServingStatus) => { for (const name of healthCheckedServices) health.setStatus(name, status); };
  return { serving: () => setEvery('SERVING'), notServing: () => setEvery('NOT_SERVING') };
}
