import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Fields every log line written within one call carries, whichever logger writes it (the transport's,
 * a service's, the outcome log): the gRPC request id (`reqId`, as Fastify names it on HTTP lines).
 * The platform logger adds them (pino `mixin`, see logger.ts); outside a call there are none.
 */
const context = new AsyncLocalStorage<Readonly<Record<string, string>>>();

/** Runs `run` with `fields` on every log line written within it, its awaits and callbacks included. */
export function withLogFields<T>(fields: Readonly<Record<string, string>>, run: () => T): T {
  return context.run(fields, run);
}

/** The fields of the call running now, or none. */
export function logFields(): Readonly<Record<string, string>> {
  return context.getStore() ?? {};
}
