import * as grpc from '@grpc/grpc-js';
import { service as healthService } from 'grpc-health-check';

const HealthClient = grpc.makeGenericClientConstructor(healthService, 'Health');

/**
 * A readiness probe of the gRPC listener: a `grpc.health.v1.Health/Check` of the whole server over
 * a real connection to its port, so it answers up only when the port is bound and the server
 * answers SERVING (NOT_SERVING once it stops).
 */
export function grpcListenerProbe(options: { host: string; port: number; timeoutMs?: number }) {
  // A wildcard bind is reached on loopback.
  const host = options.host === '0.0.0.0' ? '127.0.0.1' : options.host === '::' ? '[::1]' : options.host.includes(':') ? `[${options.host}]` : options.host;
  const client = new HealthClient(`${host}:${options.port}`, grpc.credentials.createInsecure());
  const timeoutMs = options.timeoutMs ?? 1000;
  return {
    probe: () => new Promise<void>((resolve, reject) => {
      (client as unknown as { check: HealthCheck }).check({ service: '' }, { deadline: Date.now() + timeoutMs }, (error, response) => {
        if (error) return reject(new Error(`gRPC port ${options.port}: ${error.details || error.message}`));
        if (response?.status !== 'SERVING') return reject(new Error(`gRPC health ${response?.status ?? 'unknown'}`));
        resolve();
      });
    }),
    close: () => client.close(),
  };
}

type HealthCheck = (
  request: { service: string }, options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: { status: string }) => void,
) => grpc.ClientUnaryCall;
