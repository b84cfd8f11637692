import type { Address, Hex, PublicClient, TransactionReceipt } from 'viem';
import type { ChainJournal, LostTransaction } from './chain-journal.ts';
import { positionOf } from './mined-receipt.ts';
import { createMinedFacts } from './mined-facts.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import { errorSummary } from '#shared/redact.ts';

export interface RebuildDeps {
  journal: ChainJournal;
  /** A node we run (anvil): its mining and clock are ours to drive. */
  client: PublicClient;
  lanes: readonly Address[];
  clock: Clock;
  logger: Logger;
}

/**
 * A managed anvil that crashed comes back from its last checkpoint (src/chain/chain-checkpoint.ts),
 * without the blocks mined since, although the journal recorded their transactions mined and the
 * platform answered for them. This mines them again from their journaled bytes (same hashes), one
 * per block, in the order the chain first mined them (block, then index) and each at its original
 * block's timestamp: every transfer authorization is judged against the time it first executed at
 * (its `validBefore` may have passed since), and every later transaction finds the balances it first
 * found, whichever lane carried it. A lane's transaction journaled but not recorded mined (its
 * receipt was still being recorded at the crash) is mined just before the next one of its lane.
 * Afterwards the node's clock is set back to now. Answers how many transactions were mined again;
 * what is left (a transaction the node refuses) the relayer's recovery sends again as before.
 */
export async function rebuildLostBlocks(network: string, deps: RebuildDeps): Promise<number> {
  const { client, journal, logger } = deps;
  const chainNonces = new Map(await Promise.all(deps.lanes.map(async (address) =>
    [address as string, await client.getTransactionCount({ address, blockTag: 'latest' })] as const)));
  // Recorded mined at or above the nonce read a moment ago, and without a receipt now: lost (one mined
  // and recorded meanwhile by a server beside this process has its receipt).
  const candidates = await journal.listLost(network, chainNonces);
  const receipts = await Promise.all(candidates.map((tx) => client.getTransactionReceipt({ hash: tx.txHash as Hex }).then(() => true, () => false)));
  const lost = candidates.filter((_, i) => !receipts[i]);
  if (lost.length === 0) return 0;
  logger.error({ network, lost: lost.length, fromBlock: lost[0]?.blockNumber },
    'the chain node lost blocks recorded mined; mining their transactions again from the journal, in order and at their original times');
  const unmined = new Map(await Promise.all([...new Set(lost.map((tx) => tx.relayer))].map(async (relayer) =>
    [relayer, await journal.listUnmined(network, relayer)] as const)));
  const next = new Map(chainNonces);
  const request = (method: string, params: unknown[] = []) => client.request({ method, params } as never) as Promise<unknown>;
  const automine = await request('anvil_getAutomine');
  await request('evm_setAutomine', [false]);
  let rebuilt = 0;
  const factsOf = createMinedFacts(client);
  try {
    for (const tx of lost) {
      // A gap below it in its lane: the journaled transactions that fill it go first, at its time.
      const gap = (unmined.get(tx.relayer) ?? []).filter((u) => u.nonce >= (next.get(tx.relayer) ?? 0) && u.nonce < tx.nonce);
      for (const earlier of gap) await mineAgain(earlier.rawTx as Hex, tx.blockTimestamp);
      const receipt = await mineAgain(tx.rawTx as Hex, tx.blockTimestamp);
      if (!receipt) continue;
      next.set(tx.relayer, tx.nonce + 1);
      rebuilt++;
      const status = receipt.status === 'success' ? 'confirmed' : 'failed';
      if (status !== tx.status) logger.error({ network, txHash: tx.txHash, was: tx.status, now: status }, 'a transaction mined again ended otherwise than the first time');
      await journal.markMined(tx.id, status, positionOf(receipt, await factsOf(receipt)), deps.clock());
    }
  } finally {
    await request('anvil_setTime', [Math.floor(deps.clock() / 1000)]).catch(() => undefined);
    await request('evm_setAutomine', [automine]);
  }
  logger.info({ network, rebuilt, lost: lost.length }, 'lost blocks mined again from the journal');
  return rebuilt;

  /** Sends one journaled transaction and mines a block for it alone, at `timestamp` when known. */
  async function mineAgain(rawTx: Hex, timestamp: LostTransaction['blockTimestamp']): Promise<TransactionReceipt | undefined> {
    try {
      const hash = await client.sendRawTransaction({ serializedTransaction: rawTx });
      if (timestamp !== undefined) {
        // Never before its parent: a node brought back without a checkpoint older than the block (none
        // is: chain-checkpoint.ts writes one before anything is mined) would otherwise stamp it now.
        const head = await client.getBlock({ blockTag: 'latest' });
        const at = Math.max(timestamp, Number(head.timestamp));
        // The node's clock first (a restarted anvil refuses a next timestamp below its start time), then the block's.
        await request('anvil_setTime', [at]);
        await request('evm_setNextBlockTimestamp', [at]);
      }
      await request('evm_mine');
      return await client.getTransactionReceipt({ hash });
    } catch (cause) {
      // "nonce too low": the checkpoint already holds its effect (state ahead of its blocks).
      logger.warn({ network, reason: errorSummary(cause) }, 'a lost transaction was not mined again');
      return undefined;
    }
  }
}
