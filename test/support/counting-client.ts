import { createPublicClient, custom, http, TimeoutError, type Hex, type PublicClient } from 'viem';
import { foundry } from 'viem/chains';

/**
 * A node's client that counts what is asked of it: calls by method, the blocks whose receipts were
 * read in order, and calls of a method that can be held (a node slow to answer) until the test lets
 * them go, or left unanswered once (viem's TimeoutError, as from a node that did not answer in time).
 * No retries: what the code under test sees is what the node answered, not viem's retries.
 */
export function countingClient(url: string) {
  const calls = new Map<string, number>();
  const blocksRead: bigint[] = [];
  const held = new Map<string, Promise<void>>();
  const unanswered = new Set<string>();
  const state = { inFlight: 0 };
  const inner = http(url)({ chain: foundry });
  const client = createPublicClient({
    chain: foundry,
    transport: custom({
      request: async (args: { method: string; params?: unknown }) => {
        calls.set(args.method, (calls.get(args.method) ?? 0) + 1);
        if (args.method === 'eth_getBlockReceipts') blocksRead.push(BigInt((args.params as [Hex])[0]));
        if (unanswered.delete(args.method)) throw new TimeoutError({ body: { method: args.method }, url });
        state.inFlight++;
        try {
          await held.get(args.method);
          return await inner.request(args as never);
        } finally {
          state.inFlight--;
        }
      },
    }, { retryCount: 0 }),
  }) as PublicClient;
  const hold = (method: string) => {
    let release = () => undefined as void;
    held.set(method, new Promise<void>((resolve) => { release = resolve; }));
    return () => { held.delete(method); release(); };
  };
  const failOnce = (method: string) => { unanswered.add(method); };
  return { client, calls, blocksRead, hold, failOnce, count: (method: string) => calls.get(method) ?? 0, state };
}
