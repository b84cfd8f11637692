import { z } from 'zod';
import type { RpcMethods } from '../../jsonrpc/rpc-method.ts';

const requestId = z.union([z.string(), z.number(), z.null()])
  .describe('Echoed in the response; a request without an id is a notification and gets no response');

/**
 * The body of a JSON-RPC endpoint as the OpenAPI document shows it: one request or a batch of
 * them, each a `oneOf` on `method` whose `params` are that method's own zod schema (the one the
 * dispatcher parses them with). The envelope itself is checked by the dispatcher, which answers
 * each defect with its JSON-RPC error code.
 */
export function jsonRpcRequestSchema(methods: RpcMethods): z.ZodType {
  const requests = Object.entries(methods).map(([name, method]) => z.object({
    jsonrpc: z.literal('2.0'),
    id: requestId.optional(),
    method: z.literal(name),
    params: method.params.safeParse(undefined).success ? method.params.optional() : method.params,
  }));
  const [first, ...rest] = requests;
  if (!first) return z.never();
  const request = z.discriminatedUnion('method', [first, ...rest]);
  return z.union([request, z.array(request).min(1).describe('A batch: answered with an array of the responses owed')]);
}
