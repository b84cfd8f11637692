import { isDomainError } from '#shared/errors.ts';
import type { Metrics } from '#shared/metrics.ts';
import { resultCodeByCode } from './protocol-errors.ts';
import type { RpcMethods } from './rpc-method.ts';

/**
 * The methods with each call counted by method and the resultCode it answers, and timed. Only the
 * table's method names become labels (an unknown method never reaches here): bounded.
 */
export function withRpcMetrics(methods: RpcMethods, metrics: Metrics): RpcMethods {
  return Object.fromEntries(Object.entries(methods).map(([method, { params, run }]) => [method, {
    params,
    run: async (input: unknown, context: Parameters<typeof run>[1]) => {
      const end = metrics.jsonRpcDuration.startTimer({ method });
      try {
        const outcome = await run(input, context);
        metrics.jsonRpcCalls.inc({ method, result_code: outcome.resultCode ?? '200' });
        return outcome;
      } catch (error) {
        metrics.jsonRpcCalls.inc({ method, result_code: isDomainError(error) ? resultCodeByCode[error.code] : 'error' });
        throw error;
      } finally {
        end();
      }
    },
  }]));
}
