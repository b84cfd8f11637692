import { setTimeout as sleep } from 'node:timers/promises';
import { createTransport, http, HttpRequestError, TimeoutError, type EIP1193RequestFn, type Transport } from 'viem';
import type { NetworkName } from '#shared/networks.ts';
import { countingRpcCalls, type OnRpcCall } from './node-rpc-calls.ts';
import { monotonicReads } from './monotonic-reads.ts';

/** What one endpoint of a network is doing: answering, told to wait (429, −32005), or failing. */
export type EndpointStatus = 'up' | 'throttled' | 'failing';

export interface EndpointState {
  /** Its place in `RPC_URLS_<NETWORK>`, 0 the preferred. */
  index: number;
  /** The URL's host only: a provider's key sits in its path (Alchemy, Infura, Ankr), never shown. */
  host: string;
  status: EndpointStatus;
  /** Until when (epoch ms) it is left aside; 0 when up. */
  outUntil: number;
  /** JSON-RPC calls sent to it, each of a batch. */
  calls: number;
  /** Calls it answered 429 / −32005, calls it failed (no answer, HTTP error, timeout). */
  throttled: number;
  failed: number;
  /** The last failure, one line, without the URL. */
  lastError?: string;
}

/** How a call sent to an endpoint ended: `ok` (answered, a JSON-RPC error included), `throttled`, `failed`. */
export type EndpointOutcome = 'ok' | 'throttled' | 'failed';

export interface EndpointPoolOptions {
  network: NetworkName;
  /** The endpoints, the preferred first. */
  urls: readonly string[];
  /** The deadline of each call, every endpoint and wait included. */
  callTimeoutMs: number;
  onRpcCall?: OnRpcCall | undefined;
  /** Told of every call's end on an endpoint, for `vixpay_node_endpoint_*`. */
  onOutcome?: ((endpoint: EndpointState, outcome: EndpointOutcome) => void) | undefined;
  /** Calls made in one tick go to an endpoint as one JSON-RPC batch (the platform's clients); default true. */
  batch?: boolean;
  now?: () => number;
}

export interface EndpointPool {
  transport: Transport;
  states(): EndpointState[];
  /**
   * The highest block the network's answers showed since the last call (its receipts', its heads';
   * those the transport answers with a higher one included), or undefined when none: what a node
   * that lost blocks no longer has.
   */
  highestSince(): bigint | undefined;
}

/** A failing endpoint is left aside this long, doubling with each failure in a row up to `maxFailedOutMs`. */
const firstFailedOutMs = 2_000;
const maxFailedOutMs = 60_000;
/** A throttled endpoint that says not how long: wait this long. A `Retry-After` above the cap is capped. */
const defaultThrottleMs = 1_000;
const maxThrottleMs = 5 * 60_000;
/** Attempts of one call: at least this many (one endpoint: retried), else once per endpoint and once more. */
const leastAttempts = 3;

/**
 * The endpoints of one network as one viem transport. Each call goes to the preferred endpoint that
 * is not left aside; an endpoint that throttles (HTTP 429, JSON-RPC −32005/429/−32007) is left aside
 * for its `Retry-After` (1 s when it says not), one that fails (no answer, an HTTP error, a timeout)
 * for 2 s doubling up to a minute, and the call goes on at the next one, within its deadline. When
 * every endpoint is aside, a failing one is tried again anyway, and a throttled one waited for when
 * its wait ends before the call's deadline; otherwise the call fails with the last endpoint's error.
 * A JSON-RPC error the node answered (a revert, "nonce too low", "method not found") is the call's
 * answer, never tried elsewhere. A raw transaction sent again at another endpoint is the same signed
 * bytes: the same hash, at most "already known" there.
 */
export function createEndpointPool(options: EndpointPoolOptions): EndpointPool {
  const now = options.now ?? Date.now;
  const endpoints = options.urls.map((url, index) => ({
    state: { index, host: hostOf(url), status: 'up', outUntil: 0, calls: 0, throttled: 0, failed: 0 } as EndpointState,
    failuresInRow: 0,
    request: http(url, {
      retryCount: 0, timeout: options.callTimeoutMs, ...(options.batch !== false && { batch: { wait: 0 } }),
      ...countingRpcCalls(options.network, options.onRpcCall),
    })({ retryCount: 0 }).request,
  }));
  type Endpoint = (typeof endpoints)[number];

  const settle = (endpoint: Endpoint, outcome: EndpointOutcome, error?: unknown) => {
    const { state } = endpoint;
    state.calls++;
    if (outcome === 'ok') {
      endpoint.failuresInRow = 0;
      state.status = 'up';
      state.outUntil = 0;
    } else if (outcome === 'throttled') {
      state.throttled++;
      state.status = 'throttled';
      state.outUntil = Math.max(state.outUntil, now() + throttleWaitMs(error));
      state.lastError = summary(error);
    } else {
      state.failed++;
      endpoint.failuresInRow++;
      state.status = 'failing';
      state.outUntil = now() + Math.min(maxFailedOutMs, firstFailedOutMs * 2 ** (endpoint.failuresInRow - 1));
      state.lastError = summary(error);
    }
    options.onOutcome?.({ ...state }, outcome);
  };

  /** The endpoint to try now: the preferred one not aside, else the failing one aside longest ago; undefined when only throttled ones are left. */
  const pick = (tried: ReadonlySet<Endpoint>): Endpoint | undefined => {
    const at = now();
    const order = [...endpoints.filter((e) => !tried.has(e)), ...endpoints.filter((e) => tried.has(e))];
    return order.find((e) => e.state.outUntil <= at)
      ?? order.filter((e) => e.state.status === 'failing').sort((a, b) => a.state.outUntil - b.state.outUntil)[0];
  };

  const request: EIP1193RequestFn = (async (args: Parameters<EIP1193RequestFn>[0], requestOptions?: Parameters<EIP1193RequestFn>[1]) => {
    const deadline = now() + options.callTimeoutMs;
    const tried = new Set<Endpoint>();
    let lastError: unknown;
    for (let attempt = 0; attempt < Math.max(leastAttempts, endpoints.length + 1); attempt++) {
      let endpoint = pick(tried);
      if (!endpoint) {
        // Every endpoint throttled: wait for the first one free again, if that is before the deadline.
        const soonest = Math.min(...endpoints.map((e) => e.state.outUntil));
        if (soonest >= deadline) break;
        await sleep(Math.max(0, soonest - now()));
        endpoint = pick(tried);
        if (!endpoint) break;
      } else if (tried.has(endpoint) && attempt > 0) {
        // Again at an endpoint this call already tried: back off a little, as viem's own retries do.
        const pause = Math.min(150 * 2 ** (attempt - 1), deadline - now());
        if (pause > 0) await sleep(pause);
      }
      const left = deadline - now();
      if (left <= 0) break;
      tried.add(endpoint);
      try {
        const result: unknown = await withTimeout(endpoint.request(args, requestOptions), left, args);
        settle(endpoint, 'ok');
        return result;
      } catch (error) {
        const kind = classify(error);
        if (kind === 'answer') {
          settle(endpoint, 'ok');
          throw error;
        }
        settle(endpoint, kind, error);
        lastError = error;
      }
    }
    throw lastError ?? new TimeoutError({ body: args as { [key: string]: unknown }, url: 'every endpoint' });
  }) as EIP1193RequestFn;

  let highest: bigint | undefined;
  const see = (block: bigint) => { if (highest === undefined || block > highest) highest = block; };
  const transport: Transport = () => createTransport({
    key: 'endpoints', name: `${options.network} endpoints`, type: 'endpoints',
    // Over nodes not at the same block (a provider's load balancer), reads never go backwards.
    request: monotonicReads(request, options.callTimeoutMs, now, see), retryCount: 0,
  });
  return {
    transport,
    states: () => endpoints.map((e) => ({ ...e.state })),
    highestSince() {
      const seen = highest;
      highest = undefined;
      return seen;
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number, args: unknown): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError({ body: args as { [key: string]: unknown }, url: '' })), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The first error of `error`'s causes that `is` accepts. */
function causeOf<T>(error: unknown, is: (e: unknown) => e is T): T | undefined {
  for (let e = error, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) if (is(e)) return e;
  return undefined;
}

const throttleCodes = new Set([-32005, 429, -32007]);
/** A node that serves not the method says so whatever its HTTP status: another endpoint is not asked. */
const refusalCodes = new Set([-32601, -32004]);

/** The HTTP reply of a non-2xx answer (viem keeps its status and headers on the error). */
const httpReplyOf = (error: unknown) =>
  causeOf(error, (e): e is { status: number; headers?: Headers } => typeof (e as { status?: unknown } | null)?.status === 'number');

/** A throttle (429, −32005), a failure (the endpoint did not answer, or not with 2xx), or the node's own answer. */
export function classify(error: unknown): 'throttled' | 'failed' | 'answer' {
  const status = httpReplyOf(error)?.status;
  const code = causeOf(error, (e): e is { code: number } => typeof (e as { code?: unknown } | null)?.code === 'number')?.code;
  if (status === 429 || (code !== undefined && throttleCodes.has(code))) return 'throttled';
  if (code !== undefined && refusalCodes.has(code)) return 'answer';
  if (status !== undefined || causeOf(error, (e): e is HttpRequestError | TimeoutError => e instanceof HttpRequestError || e instanceof TimeoutError)) return 'failed';
  return 'answer';
}

/** `Retry-After` in seconds or as an HTTP date; −32005's `data.backoff_seconds` (Infura); else 1 s. */
function throttleWaitMs(error: unknown): number {
  const header = httpReplyOf(error)?.headers?.get('retry-after')?.trim();
  let ms: number | undefined;
  if (header && /^\d+$/.test(header)) ms = Number(header) * 1000;
  else if (header) {
    const at = Date.parse(header);
    if (!Number.isNaN(at)) ms = at - Date.now();
  }
  const data = causeOf(error, (e): e is { data: unknown } => (e as { data?: unknown } | null)?.data !== undefined)?.data as
    { backoff_seconds?: unknown; rate?: { backoff_seconds?: unknown } } | undefined;
  const backoff = data?.backoff_seconds ?? data?.rate?.backoff_seconds;
  if (ms === undefined && typeof backoff === 'number' && Number.isFinite(backoff)) ms = backoff * 1000;
  return Math.min(maxThrottleMs, Math.max(0, ms ?? defaultThrottleMs));
}

/** A URL's host, what the platform shows of an endpoint. */
export function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return 'endpoint';
  }
}

/** One line of an endpoint's error, without URLs (a key may be in one). */
function summary(error: unknown): string {
  const text = error instanceof Error ? ((error as { shortMessage?: string }).shortMessage ?? error.message) : String(error);
  return (text.split('\n')[0] ?? '').replace(/\b[a-z]+s?:\/\/\S+/gi, '<url>').slice(0, 160);
}
