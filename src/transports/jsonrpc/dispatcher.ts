import { isDomainError } from '#shared/errors.ts';
import { stringifyJson } from '#shared/json.ts';
import { protocolError, resultCodeByCode, type ProtocolError } from './protocol-errors.ts';
import { JsonText, type RpcContext, type RpcMethods } from './rpc-method.ts';

type RpcId = string | number | null;

interface RpcResponse {
  jsonrpc: '2.0';
  id: RpcId;
  result?: Record<string, unknown>;
  error?: ProtocolError;
}

export interface DispatcherOptions {
  methods: RpcMethods;
  batchLimit: number;
}

/**
 * JSON-RPC 2.0 as docs/interfaces.md#json-rpc-apis shapes it: answers the body text with the response text, or with
 * undefined when nothing is owed (a notification, or a batch of only notifications).
 */
export function createDispatcher(options: DispatcherOptions) {
  const { methods, batchLimit } = options;

  async function handleOne(request: unknown, context: RpcContext): Promise<RpcResponse | undefined> {
    if (typeof request !== 'object' || request === null || Array.isArray(request)) {
      return failure(null, protocolError('invalidRequest', 'a request must be an object'));
    }
    const r = request as Record<string, unknown>;
    const hasId = Object.hasOwn(r, 'id');
    const id = r.id;
    if (hasId && !(id === null || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)))) {
      return failure(null, protocolError('invalidRequest', 'id must be a string, a number or null'));
    }
    const replyId = (hasId ? id : null) as RpcId;
    if (r.jsonrpc !== '2.0') return failure(replyId, protocolError('invalidRequest', 'jsonrpc must be exactly "2.0"'));
    if (typeof r.method !== 'string' || r.method.length === 0) return failure(replyId, protocolError('invalidRequest', 'method must be a string'));
    if (r.params !== undefined && (typeof r.params !== 'object' || r.params === null)) {
      return failure(replyId, protocolError('invalidRequest', 'params must be an object or an array'));
    }
    const response = await invoke(r.method, r.params, replyId, context);
    return hasId ? response : undefined;
  }

  async function invoke(name: string, rawParams: unknown, id: RpcId, context: RpcContext): Promise<RpcResponse> {
    const method = Object.hasOwn(methods, name) && !name.startsWith('rpc.') ? methods[name] : undefined;
    if (!method) return failure(id, protocolError('methodNotFound', name.slice(0, 100)));
    const parsed = method.params.safeParse(rawParams);
    if (!parsed.success) {
      const detail = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || 'params'}: ${i.message}`).join('; ');
      return failure(id, protocolError('invalidParams', detail));
    }
    try {
      const outcome = await method.run(parsed.data, context);
      const result: Record<string, unknown> = {
        resultCode: outcome.resultCode ?? '200',
        resultMessage: outcome.resultMessage ?? 'Success',
        resultData: outcome.resultData,
      };
      if (outcome.transactionId !== undefined) result.TransactionID = outcome.transactionId;
      return { jsonrpc: '2.0', id, result };
    } catch (error) {
      if (isDomainError(error)) {
        const resultCode = resultCodeByCode[error.code];
        if (Number(resultCode) >= 500) context.log.error({ err: error, method: name }, 'service error');
        const result: Record<string, unknown> = { resultCode, resultMessage: error.message, resultData: '' };
        return { jsonrpc: '2.0', id, result };
      }
      context.log.error({ err: error, method: name }, 'unhandled error in JSON-RPC method');
      return failure(id, protocolError('internal'));
    }
  }

  return {
    /** The methods served, each with the zod schema of its params (the OpenAPI document shows them). */
    methods,
    /** Body text in, response text out. */
    async handle(body: string, context: RpcContext): Promise<string | undefined> {
      let payload: unknown;
      try {
        payload = JSON.parse(body);
      } catch {
        return stringifyJson(failure(null, protocolError('parse')));
      }
      if (Array.isArray(payload)) {
        if (payload.length === 0) return stringifyJson(failure(null, protocolError('invalidRequest', 'empty batch')));
        if (payload.length > batchLimit) {
          return stringifyJson(failure(null, protocolError('invalidRequest', `batch of ${payload.length} exceeds the limit of ${batchLimit}`)));
        }
        const responses: string[] = [];
        for (const request of payload) {
          const response = await handleOne(request, context);
          if (response) responses.push(responseText(response));
        }
        return responses.length > 0 ? `[${responses.join(',')}]` : undefined;
      }
      const response = await handleOne(payload, context);
      return response ? responseText(response) : undefined;
    },
  };
}

export type Dispatcher = ReturnType<typeof createDispatcher>;

/** One response's JSON text; a JsonText resultData goes in as it is, as the result's last field. */
function responseText(response: RpcResponse): string {
  const data = response.result?.resultData;
  if (!(data instanceof JsonText)) return stringifyJson(response);
  const { resultData: _written, ...result } = response.result!;
  // `{"jsonrpc":"2.0","id":…,"result":{…}}`: `result` is the last field, and never empty (resultCode).
  const envelope = stringifyJson({ jsonrpc: response.jsonrpc, id: response.id, result });
  return `${envelope.slice(0, -2)},"resultData":${data.text}}}`;
}

function failure(id: RpcId, error: ProtocolError): RpcResponse {
  return { jsonrpc: '2.0', id, error };
}
