import type { Hex } from 'viem';

/**
 * Why a wait ended without a final receipt. The relayer treats every rejection of `wait` as "no
 * receipt yet" and leaves the journaled transaction to recovery (same signed bytes), so none of
 * these ever counts as success:
 * - `timeout`: no receipt (or not enough confirmations) within the wait;
 * - `reorged`: it was mined, then its block left the canonical chain and the node no longer has a
 *   receipt for it (its transaction is back in the node's pool, or will be rebroadcast);
 * - `dropped`: it was mined, then vanished from the chain and from the node's pool (a reorg that
 *   dropped it, or another transaction of the same nonce replaced it);
 * - `replaced`: never mined, and its sender's nonce is used up on chain by another transaction;
 * - `closed`: the watcher was closed (shutdown).
 */
export class ReceiptNotFinalError extends Error {
  override name = 'ReceiptNotFinalError';
  readonly reason: 'timeout' | 'reorged' | 'dropped' | 'replaced' | 'closed';
  readonly hash: Hex;

  constructor(reason: ReceiptNotFinalError['reason'], hash: Hex, message: string) {
    super(message);
    this.reason = reason;
    this.hash = hash;
  }
}
