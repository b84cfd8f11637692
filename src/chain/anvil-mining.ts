import type { Hex, PublicClient } from 'viem';

/** A transaction pending this long on an automining chain we run gets a block mined for it. */
const nudgeAfterMs = 1_000;

/**
 * anvil's automine can leave a ready transaction in its pool until another one arrives (foundry
 * issue 10122, seen here under concurrent lanes): on a chain we run, a transaction still pending
 * after `afterMs` while automine is on gets a block mined for it. A chain whose mining a test paused
 * (automine off) is left alone. Answers how to cancel it (its receipt came).
 */
export function nudgeAnvilMining(client: PublicClient, txHash: Hex, afterMs = nudgeAfterMs): () => void {
  const timer = setTimeout(() => {
    void (async () => {
      const automine = await client.request({ method: 'anvil_getAutomine' as never }) as unknown as boolean;
      const tx = await client.getTransaction({ hash: txHash }).catch(() => undefined);
      if (automine && tx && tx.blockNumber === null) await client.request({ method: 'evm_mine' as never });
    })().catch(() => undefined);
  }, afterMs);
  return () => clearTimeout(timer);
}
