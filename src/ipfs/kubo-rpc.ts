import { create, type KuboRPCClient } from 'kubo-rpc-client';
import { DomainError } from '#shared/errors.ts';

export interface KuboRpcOptions {
  /** Kubo's RPC address, e.g. `http://127.0.0.1:5001` (a trailing `/api/v0` is accepted). */
  apiUrl: string;
  /** Time allowed for Kubo to start answering a call (all but `add` and `pin/add`, which may run long). */
  timeoutMs?: number;
}

/** kubo-rpc-client, with each call's deadline and failures mapped to DomainErrors once. */
export interface KuboRpc {
  client: KuboRPCClient;
  /** Runs a call; unless `noTimeout`, Kubo must answer within `timeoutMs`. */
  call<T>(command: string, run: (signal: AbortSignal) => Promise<T>, options?: { noTimeout?: boolean }): Promise<T>;
  /** Runs a streamed call; Kubo must start answering (its first item) within `timeoutMs`. */
  stream<T>(command: string, run: (signal: AbortSignal) => AsyncIterable<T>): AsyncGenerator<T>;
  /** A failure of `command` (thrown by kubo-rpc-client) as a DomainError. */
  failure(command: string, error: unknown): DomainError;
}

/** Reads run offline, so a read still unanswered is content the node cannot find. */
const contentReads = new Set(['cat', 'ls', 'files/stat']);

export function createKuboRpc(options: KuboRpcOptions): KuboRpc {
  const base = options.apiUrl.replace(/\/+$/, '').replace(/\/api\/v0$/, '');
  const timeoutMs = options.timeoutMs ?? 30_000;
  // No client-side `timeout` option: kubo-rpc-client would also send it to Kubo as `timeout=`.
  const client = create({ url: `${base}/api/v0` });

  /** A deadline for the start of an answer; `answered()` stops it. */
  function deadline(command: string, noTimeout = false) {
    const controller = new AbortController();
    let timedOut = false;
    const timer = noTimeout
      ? undefined
      : setTimeout(() => {
          timedOut = true;
          controller.abort(new DOMException(`no answer in ${timeoutMs} ms`, 'TimeoutError'));
        }, timeoutMs);
    return {
      signal: controller.signal,
      answered: () => clearTimeout(timer),
      failure(error: unknown): DomainError {
        clearTimeout(timer);
        if (!timedOut) return failure(command, error);
        const code = contentReads.has(command) ? 'request.not_found' : 'internal';
        return new DomainError(code, `IPFS node did not answer ${command} in ${timeoutMs} ms`, { cause: error });
      },
    };
  }

  function failure(command: string, error: unknown): DomainError {
    if (error instanceof DomainError) return error;
    const { name, message, response } = error as { name?: string; message?: string; response?: { status?: number } };
    // HTTPError: Kubo answered `{Message, Code, Type: "error"}`; the client's TimeoutError: Kubo's own deadline.
    if (name === 'HTTPError' || name === 'TimeoutError') return kuboMessageError(command, message ?? '', response?.status);
    return new DomainError('internal', `IPFS node unreachable at ${base}`, { cause: error });
  }

  return {
    client,
    failure,
    async call(command, run, callOptions = {}) {
      const call = deadline(command, callOptions.noTimeout);
      try {
        return await run(call.signal);
      } catch (error) {
        throw call.failure(error);
      } finally {
        call.answered();
      }
    },
    async *stream(command, run) {
      const call = deadline(command);
      try {
        for await (const item of run(call.signal)) {
          call.answered();
          yield item;
        }
      } catch (error) {
        throw call.failure(error);
      } finally {
        call.answered();
      }
    },
  };
}

/** Kubo's error message (status 500, sometimes 400/404) as a DomainError. */
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
