import type { Hex, PublicClient } from 'viem';

/**
 * True when the node has, now, a successful receipt of `hash` whose block has `confirmations`
 * blocks counting itself up to the node's head (`CONFIRMATIONS`). A node that lost the block (back
 * from older state, a reorg deeper than the depth) has no receipt: false. A node that does not
 * answer: false too, as nothing on the node says it is final.
 */
export async function receiptAtDepth(client: Pick<PublicClient, 'getTransactionReceipt' | 'getBlockNumber'>, hash: Hex, confirmations: number): Promise<boolean> {
  try {
    const receipt = await client.getTransactionReceipt({ hash });
    if (receipt.status !== 'success') return false;
    const head = await client.getBlockNumber({ cacheTime: 0 });
    return head - receipt.blockNumber + 1n >= BigInt(confirmations);
  } catch {
    return false;
  }
}
