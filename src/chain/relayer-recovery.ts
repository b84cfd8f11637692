import type { Address, Hex, LocalAccount } from 'viem';
import type { ChainJournal } from './chain-journal.ts';
import type { ChainClients } from './chain-clients.ts';
import type { ReceiptWaiter } from './receipt-waiter.ts';
import type { TransactionSender } from './transaction-sender.ts';
import { repriceStale } from './reprice-stale.ts';
import { usedAuthorizationKeys } from './mined-receipt.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';

/** How long a sweep of stale transactions waits for their receipts (the next sweep waits again). */
const staleReceiptWaitMs = 3_000;
/**
 * On a node we do not run, a lane whose transactions were recorded mined within this window has its
 * nonce on chain checked at each stale sweep: a node that lost recent blocks (restarted from an older
 * state, a provider failing over to one that lags, a reorg deeper than CONFIRMATIONS) shows a nonce
 * below the journal's. One eth_getTransactionCount per such lane and sweep; none for an idle lane.
 */
const lostBlockWatchMs = 10 * 60_000;

/** `Relayer.recover` and `Relayer.rebroadcastStale`: the journaled transactions nobody waits for any more. */
export interface RelayerRecovery {
  recover(network: NetworkName): Promise<number>;
  rebroadcastStale(network: NetworkName, olderThanMs: number): Promise<number>;
}

export interface RelayerRecoveryDeps {
  journal: ChainJournal;
  chains: ChainClients;
  lanes: readonly LocalAccount[];
  clock: Clock;
  logger: Logger;
  sender: Pick<TransactionSender, 'broadcast' | 'resyncNonce'>;
  waiter: Pick<ReceiptWaiter, 'finish' | 'repriced'>;
  /** As `RelayerDeps.repricing`. */
  repricing: { afterMs: number; maxFeePerGas: bigint };
  /** Called for every re-priced version journaled. */
  onReprice?: ((network: NetworkName) => void) | undefined;
  /**
   * On a node we run that crashed: mines again, in their order and at their times, the blocks it
   * lost since its last checkpoint (anvil-rebuild-lost-blocks.ts). Answers how many transactions.
   */
  rebuildLostBlocks?: ((network: NetworkName) => Promise<number>) | undefined;
}

/**
 * Finishes journaled transactions left without a receipt (a crash, a node that dropped or lost
 * them): sent again from their journaled bytes, re-priced first when stale (reprice-stale.ts), and
 * recorded from their receipts.
 */
export function createRelayerRecovery(deps: RelayerRecoveryDeps): RelayerRecovery {
  const { journal, chains, clock, logger, sender, waiter } = deps;

  async function finishUnmined(network: NetworkName, address: Address, stale?: { before: number; waitMs: number }): Promise<{ pending: number; finished: number }> {
    const pending = (await journal.listUnmined(network, address))
      .filter((tx) => stale === undefined || tx.createdAt < stale.before);
    const account = deps.lanes.find((lane) => lane.address === address);
    if (stale && account) {
      await repriceStale({
        journal, chain: chains[network], account, ...deps.repricing, now: clock, logger,
        onRepriced: (tx) => {
          deps.onReprice?.(network);
          waiter.repriced(tx.id, tx.txHash as Hex);
        },
      }, pending);
    }
    for (const tx of pending) await sender.broadcast(network, tx.rawTx as Hex);
    const results = await Promise.all(pending.map((tx) => waiter.finish(network, tx.id, [tx.txHash, ...tx.supersededHashes] as Hex[], stale?.waitMs)));
    // Nobody waits for these any more: their authorizations are recorded used from the receipts.
    for (const { receipt } of results) {
      if (receipt) await journal.markAuthorizationsUsed(receipt.transactionHash, usedAuthorizationKeys(network, receipt), clock());
    }
    return { pending: pending.length, finished: results.filter((r) => r.status !== 'signed').length };
  }

  /**
   * A node that lost blocks no longer holds transactions recorded mined: every journaled one at or
   * above the lane's nonce on chain is marked unmined again (its authorizations no longer `used`), to
   * be sent again, in nonce order, from its journaled bytes (the same hash), so none is lost and no
   * later transaction waits behind a gap. Answers how many.
   */
  async function reopenLost(network: NetworkName, address: Address): Promise<number> {
    const chainNonce = await chains[network].client.getTransactionCount({ address, blockTag: 'latest' });
    const lost = await journal.reopenFrom(network, address, chainNonce, clock());
    if (lost > 0) logger.error({ network, lane: address, lost, chainNonce }, 'the chain lost transactions recorded as mined; sending them again');
    return lost;
  }

  return {
    async recover(network) {
      // A node we run that crashed lost the blocks since its last checkpoint: they are mined again
      // first, in their order and at their times, so the transfers in them execute as they did.
      let finishedAll = chains[network].managed && deps.rebuildLostBlocks
        ? await deps.rebuildLostBlocks(network)
        : 0;
      for (const { address } of deps.lanes) {
        // A node that lost blocks (an anvil killed between two state dumps, a reorg) no longer holds
        // transactions we recorded as mined: every journaled one at or above the lane's nonce on
        // chain is sent again, in nonce order, from its journaled bytes (same hash), so none is lost
        // and no later transaction waits behind a gap.
        await reopenLost(network, address);
        const { pending, finished } = await finishUnmined(network, address);
        await sender.resyncNonce(network, address);
        if (pending > 0) logger.info({ network, lane: address, pending, finished }, 'recovered journaled transactions');
        finishedAll += finished;
      }
      return finishedAll;
    },

    async rebroadcastStale(network, olderThanMs) {
      let finishedAll = 0;
      for (const { address } of deps.lanes) {
        // A node we run that lost blocks is restarted and rebuilt by its supervisor (`recover`); one we
        // do not run is watched here, for the lanes that had a transaction mined lately.
        if (!chains[network].managed && (await journal.lastMinedNonce(network, address, clock() - lostBlockWatchMs)) !== undefined) {
          const lost = await reopenLost(network, address);
          if (lost > 0) {
            // Sent again now, whatever their age: they hold the lane's later nonces.
            const { pending, finished } = await finishUnmined(network, address, { before: Infinity, waitMs: staleReceiptWaitMs });
            finishedAll += finished;
            logger.info({ network, lane: address, pending, finished }, 'sent again the transactions the chain lost');
            continue;
          }
        }
        const { pending, finished } = await finishUnmined(network, address, { before: clock() - olderThanMs, waitMs: staleReceiptWaitMs });
        if (pending > 0) logger.info({ network, lane: address, pending, finished }, 'rebroadcast journaled transactions left without a receipt');
        finishedAll += finished;
      }
      return finishedAll;
    },
  };
}
