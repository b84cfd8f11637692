import { setTimeout as sleep } from 'node:timers/promises';
import { hexToBigInt, numberToHex, type EIP1193RequestFn } from 'viem';

/** Answers that may be "not seen yet" when null: from a node behind, not an answer about the chain. */
const nullWhenBehind = new Set(['eth_getTransactionReceipt', 'eth_getBlockReceipts', 'eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getTransactionByHash']);
/** Reads of the state a decision about money rests on (nonces, balances, a reservation's calls). */
const stateReads = new Set(['eth_getTransactionCount', 'eth_getBalance', 'eth_call', 'eth_estimateGas']);

type Request = Parameters<EIP1193RequestFn>[0];
type Options = Parameters<EIP1193RequestFn>[1];

/**
 * Reads of one network that never go backwards, over endpoints whose nodes are not at the same block
 * (a provider's load balancer; docs/decisions/node-providers.md):
 * - the head (`eth_blockNumber`) is the highest block seen (a node behind answers it too);
 * - a null receipt, block or transaction is asked again beside `eth_blockNumber`, in one HTTP request
 *   (one node answers both), until a node at the highest block seen answers: only then is it "not
 *   there". Nodes that all stay behind for half the call's deadline (at most 1.5 s) are a chain that
 *   went back (restored from an older state, a reorg to fewer blocks): their answer stands;
 * - once the endpoints disagreed (a head below one seen), nonces, balances and calls are asked beside
 *   `eth_blockNumber` too, and asked again while the node answering is behind.
 */
export function monotonicReads(
  request: EIP1193RequestFn, deadlineMs: number, now: () => number = Date.now,
  /** Told of every block an answer shows the network has (a head, a receipt's block), even after the chain went back. */
  onBlock?: (block: bigint) => void,
): EIP1193RequestFn {
  /** How long nodes behind are waited for before the chain is taken to have gone back. */
  const behindMs = Math.min(deadlineMs / 2, 1_500);
  let highest: bigint | undefined;
  let disagreed = false;
  /** A block the network has (`head`: a node's head, below the highest seen when that node is behind). */
  const see = (block: unknown, head = false) => {
    if (typeof block !== 'string' || !/^0x[0-9a-f]+$/i.test(block)) return;
    const n = hexToBigInt(block as `0x${string}`);
    onBlock?.(n);
    if (highest === undefined || n > highest) highest = n;
    else if (head && n < highest) disagreed = true;
  };
  /** The block an answer shows mined (a receipt's, a block's, a block's receipts'). */
  const blockOf = (result: unknown): unknown => {
    const one = Array.isArray(result) ? result[0] : result;
    return (one as { blockNumber?: unknown; number?: unknown } | null)?.blockNumber ?? (one as { number?: unknown } | null)?.number;
  };

  /** `args` beside `eth_blockNumber`, asked again while the node answering is behind `floor`. */
  async function fromNodeAt(floor: bigint, args: Request, options: Options, accept: (result: unknown) => boolean): Promise<unknown> {
    const until = now() + behindMs;
    for (let attempt = 0; ; attempt++) {
      const [head, result] = await Promise.all([request({ method: 'eth_blockNumber' } as Request, options), request(args, options)]) as [string, unknown];
      const at = hexToBigInt(head as `0x${string}`);
      if (accept(result) || at >= floor) {
        see(head, true);
        see(blockOf(result));
        return result;
      }
      disagreed = true;
      const pause = Math.min(50 * 2 ** attempt, 250);
      if (now() + pause >= until) {
        // Every node stayed behind that long: the chain went back (a node restored from an older
        // state, a reorg to fewer blocks). Its answer stands, and its head is the highest from now on.
        highest = at;
        return result;
      }
      await sleep(pause);
    }
  }

  return (async (args: Request, options?: Options) => {
    const { method } = args;
    if (method === 'eth_blockNumber') {
      const head = await request(args, options) as string;
      see(head, true);
      return highest === undefined ? head : numberToHex(highest);
    }
    if (nullWhenBehind.has(method)) {
      const floor = highest;
      const result = await request(args, options);
      if (result !== null || floor === undefined) {
        see(blockOf(result));
        return result;
      }
      return fromNodeAt(floor, args, options, (r) => r !== null);
    }
    if (stateReads.has(method) && disagreed && highest !== undefined) return fromNodeAt(highest, args, options, () => false);
    return request(args, options);
  }) as EIP1193RequestFn;
}
