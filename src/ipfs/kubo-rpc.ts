import { DomainError } from '../shared/errors.ts';

export type FetchFunction = (input: string, init?: RequestInit) => Promise<Response>;

export interface KuboRpcOptions {
  /** Kubo's RPC address, e.g. `http://127.0.0.1:5001` (a trailing `/api/v0` is accepted). */
  apiUrl: string;
  /** Time allowed for Kubo to start answering a call (all but `add`, which may upload for long). */
  timeoutMs?: number;
  fetch?: FetchFunction;
}

export interface KuboRpc {
  /** POST `/api/v0/<command>?<params>`; a non-2xx answer becomes a DomainError. */
  call(command: string, params: Record<string, string | number | boolean | undefined>, init?: RequestInit & { noTimeout?: boolean }): Promise<Response>;
  /** `call` and parse the JSON answer. */
  json<T>(command: string, params: Record<string, string | number | boolean | undefined>): Promise<T>;
}

const contentReads = new Set(['cat', 'ls', 'files/stat']);

/** The thin Kubo RPC client under `kubo-backend.ts`: every Kubo answer and failure mapped once. */
export function createKuboRpc(options: KuboRpcOptions): KuboRpc {
  const base = options.apiUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '');
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;

  async function call(command: string, params: Record<string, string | number | boolean | undefined>, init: RequestInit & { noTimeout?: boolean } = {}): Promise<Response> {
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(params)) if (value !== undefined) query.set(key, String(value));
    const { noTimeout, ...requestInit } = init;
    // The timeout covers the wait for Kubo's answer to start, not a long download after it.
    const controller = new AbortController();
    const timer = noTimeout ? undefined : setTimeout(() => controller.abort(new DOMException(`no answer in ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
    const signal = requestInit.signal ? AbortSignal.any([controller.signal, requestInit.signal]) : controller.signal;
    let response: Response;
    try {
      response = await fetchFn(`${base}/api/v0/${command}?${query}`, { method: 'POST', ...requestInit, signal });
    } catch (cause) {
      const uploadError = requestBodyError(cause);
      if (uploadError) throw uploadError;
      if ((cause as Error).name === 'TimeoutError') {
        // Reads run offline, so a read still unanswered is content the node cannot find.
        const code = contentReads.has(command) ? 'request.not_found' : 'internal';
        throw new DomainError(code, `IPFS node did not answer ${command} in ${timeoutMs} ms`, { cause });
      }
      throw new DomainError('internal', `IPFS node unreachable at ${base}`, { cause });
    } finally {
      clearTimeout(timer);
    }
    if (!response.ok) throw await kuboError(command, response);
    return response;
  }

  return {
    call,
    async json<T>(command: string, params: Record<string, string | number | boolean | undefined>): Promise<T> {
      return (await (await call(command, params)).json()) as T;
    },
  };
}

/**
 * The error that failed a streamed request body (our uploader's stream: a bad part, a cut
 * upload), which fetch reports wrapped as its `cause`; undefined for a transport failure.
 */
export function requestBodyError(error: unknown): unknown {
  for (let current = error, depth = 0; current && depth < 4; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof DomainError || (current as { statusCode?: number }).statusCode !== undefined) return current;
  }
  return undefined;
}

/** Kubo answers errors as `{Message, Code, Type: "error"}` (status 500, sometimes 400/404). */
async function kuboError(command: string, response: Response): Promise<DomainError> {
  const text = await response.text().catch(() => '');
  let message = text;
  try {
    message = (JSON.parse(text) as { Message?: string }).Message ?? text;
  } catch {
    // not JSON: keep the text
  }
  return kuboMessageError(command, message, response.status);
}

export function kuboMessageError(command: string, message: string, status = 500): DomainError {
  const lower = message.toLowerCase();
  const shown = `IPFS ${command}: ${message.slice(0, 300)}`;
  if (/not found|could not find|no link named|\(offline\)|context deadline exceeded|does not exist/.test(lower)) {
    return new DomainError('request.not_found', shown);
  }
  if (status === 400 || /invalid|malformed|is a directory|not a directory|not unixfs|unsupported|unknown cid/.test(lower)) {
    return new DomainError('request.invalid', shown);
  }
  return new DomainError('internal', shown);
}

/** Lines of an NDJSON answer (Kubo's streamed `add`/`ls` output), parsed as they arrive. */
export async function* ndjson<T>(response: Response): AsyncGenerator<T> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of response.body) {
    pending += decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline !== -1) {
      const line = pending.slice(0, newline).trim();
      pending = pending.slice(newline + 1);
      if (line) yield JSON.parse(line) as T;
      newline = pending.indexOf('\n');
    }
  }
  const last = (pending + decoder.decode()).trim();
  if (last) yield JSON.parse(last) as T;
}
