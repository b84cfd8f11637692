import type { HttpTransportConfig } from 'viem';
import type { NetworkName } from '#shared/networks.ts';

/** Told of each JSON-RPC call the platform sends to a node: its network and method. */
export type OnRpcCall = (network: NetworkName, method: string) => void;

/** A method name as a label: JSON-RPC names only (`eth_call`), anything else `other` (labels stay bounded). */
const methodName = /^[a-z][a-z0-9]{0,15}_[A-Za-z0-9]{1,48}$/;

/**
 * The methods of one JSON-RPC request body: one call, or a batch (an array), each of its calls.
 * Each element is one call the node answers, so each is counted, whatever the HTTP round trips.
 */
export function rpcMethodsOf(body: unknown): string[] {
  if (typeof body !== 'string') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return [];
  }
  return (Array.isArray(parsed) ? parsed : [parsed]).map((call) => {
    const method = (call as { method?: unknown } | null)?.method;
    return typeof method === 'string' && methodName.test(method) ? method : 'other';
  });
}

/**
 * viem `http` transport options that report every call of each request sent (retries included:
 * each is sent again): `onFetchRequest` sees the body as it goes out, a batch as one array.
 */
export function countingRpcCalls(network: NetworkName, onRpcCall: OnRpcCall | undefined): Pick<HttpTransportConfig, 'onFetchRequest'> {
  if (!onRpcCall) return {};
  return {
    onFetchRequest: (_request, init) => {
      for (const method of rpcMethodsOf(init.body)) onRpcCall(network, method);
    },
  };
}
