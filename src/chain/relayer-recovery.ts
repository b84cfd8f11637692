import type { Address, Hex, LocalAccount, TransactionReceipt } from 'viem';
import type { ChainJournal, UnminedTransaction } from './chain-journal.ts';
import type { ChainClients } from './chain-clients.ts';
import type { ReceiptWaiter } from './receipt-waiter.ts';
import type { TransactionSender } from './transaction-sender.ts';
import { repriceStale } from './reprice-stale.ts';
import { itemKey, usedAuthorizationKeys } from './mined-receipt.ts';
import { accountItemsOf, executedAccountItems } from './account-settlement.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';

/** How long a sweep of stale transactions waits for their receipts (the next sweep waits again). */
const staleReceiptWaitMs = 3_000;
/**
 * On a node we do not run, the lanes whose transactions were recorded mined within this window are
 * watched for lost blocks (a node restarted from an older state, a provider failing over to one that
 * lags, a reorg deeper than CONFIRMATIONS): each one's nonce on chain, checked against the journal's,
 * when the network shows a sign of it (see `lostBlocksSuspected`).
 */
const lostBlockWatchMs = 10 * 60_000;
/** Without pushed heads: the lanes' nonces are read this often (one call for each lane with a transaction mined lately). */
const polledLaneCheckMs = 10_000;
/** The lanes' nonces are checked this often anyway (a reorg deeper than CONFIRMATIONS to the same height shows no lower head). */
const laneNonceCheckMs = 5 * 60_000;

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

  async function finishUnmined(network: NetworkName, address: Address, stale?: { before: number; waitMs: number }): Promise<{ pending: number; finished: number; failed: string[] }> {
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
    // Sent before (by a process that crashed, or by this one a sweep ago): any may be mined already.
    const results = await Promise.all(pending.map((tx) => waiter.finish(network, tx.id, [tx.txHash, ...tx.supersededHashes] as Hex[], stale?.waitMs, { sentBefore: true })));
    // Nobody waits for these any more: their authorizations are recorded used from the receipts.
    for (const [i, { receipt }] of results.entries()) {
      if (receipt) await journal.markAuthorizationsUsed(receipt.transactionHash, await executedRows(network, (pending[i] as UnminedTransaction).rawTx as Hex, receipt), clock());
    }
    const failed = pending.filter((_, i) => results[i]?.status === 'failed').map((tx) => tx.id);
    return { pending: pending.length, finished: results.filter((r) => r.status !== 'signed').length, failed };
  }

  /**
   * The `authorizations` rows a receipt of a journaled transaction shows executed: EIP-3009
   * authorizations by their `AuthorizationUsed`; account transfers (a token without EIP-3009) as the
   * account batch reads its receipts (account-settlement.ts), the items taken from the transaction's
   * own bytes (every version of it carries the same calldata). An account item not executed is (or
   * is put back) `submitted`: the wallet's sweep ends it as the chain says, at once (cancelled at the account).
   */
  async function executedRows(network: NetworkName, rawTx: Hex, receipt: TransactionReceipt): Promise<string[]> {
    const rows = await journal.accountTransfersOf(receipt.transactionHash);
    if (rows.length === 0) return usedAuthorizationKeys(network, receipt);
    let executed: ReadonlySet<string>;
    try {
      executed = executedAccountItems(receipt, accountItemsOf(rawTx));
    } catch (error) {
      logger.error({ network, txHash: receipt.transactionHash, err: error }, 'account transfers journaled with a transaction that is no account settlement');
      executed = new Set();
    }
    return [...usedAuthorizationKeys(network, receipt), ...rows.filter((row) => executed.has(itemKey(row.token, row.from, row.nonce))).map((row) => row.key)];
  }

  /**
   * A node that lost blocks no longer holds transactions recorded mined: every journaled one at or
   * above the lane's nonce on chain is marked unmined again (its authorizations no longer `used`), to
   * be sent again, in nonce order, from its journaled bytes (the same hash), so none is lost and no
   * later transaction waits behind a gap. Answers their ids.
   */
  async function reopenLost(network: NetworkName, address: Address): Promise<Set<string>> {
    const chainNonce = await chains[network].client.getTransactionCount({ address, blockTag: 'latest' });
    const unmined = new Set((await journal.listUnmined(network, address)).map((tx) => tx.id));
    const lost = await journal.reopenFrom(network, address, chainNonce, clock());
    if (lost === 0) return new Set();
    logger.error({ network, lane: address, lost, chainNonce }, 'the chain lost transactions recorded as mined; sending them again');
    return new Set((await journal.listUnmined(network, address)).map((tx) => tx.id).filter((id) => !unmined.has(id)));
  }

  /**
   * Lost transactions that reverted when sent again (an authorization expired meanwhile): what they
   * moved, and what was answered, did not happen. Only an operator can make it good (docs/reliability.md).
   */
  function revertedAgain(network: NetworkName, address: Address, lost: ReadonlySet<string>, failed: readonly string[]): void {
    const transactions = failed.filter((id) => lost.has(id));
    if (transactions.length > 0) {
      logger.error({ network, lane: address, transactions },
        'transactions the chain lost reverted when sent again: what they moved was answered done and is undone; reconcile their operations');
    }
  }

  /** Networks whose last sign of lost blocks no sweep has yet followed through every lane. */
  const unresolved = new Set<NetworkName>();
  /** Per network: what the last sweeps saw of its head, to tell a node that went back. */
  const watched = new Map<NetworkName, { highest?: bigint; subscriptions: number; wentBack: number; lanesCheckedAt: number }>();

  /**
   * Whether the node of `network` may have lost blocks since the last sweep, asked as cheaply as the
   * network allows: with pushed heads (its subscription up), a subscription made again (the node or
   * the link restarted), a head pushed below a block seen before or one that did not follow the head
   * before it (`HeadSource.wentBack`, counted as pushed: seen even once the chain grew past it), no
   * call; without, every 10 s: a polled node shows no sign of a loss it grew past between two reads
   * (its head past the old one again, the lost blocks never read; chaos seed 2037), so the lanes'
   * nonces are read, one call per lane with a transaction mined in the last 10 minutes; and every 5
   * minutes whatever the heads say. Before, each lane's nonce was read at each 2 s sweep: 120 calls
   * per idle minute with 4 lanes.
   */
  async function lostBlocksSuspected(network: NetworkName): Promise<boolean> {
    const chain = chains[network];
    const now = clock();
    let seen = watched.get(network);
    if (!seen) watched.set(network, seen = { subscriptions: chain.heads?.subscriptions() ?? 0, wentBack: chain.heads?.wentBack() ?? 0, lanesCheckedAt: now });
    let suspected = now - seen.lanesCheckedAt >= laneNonceCheckMs;
    const heads = chain.heads;
    let head: bigint | undefined;
    if (heads?.up()) {
      if (heads.subscriptions() !== seen.subscriptions || heads.wentBack() !== seen.wentBack) suspected = true;
      seen.subscriptions = heads.subscriptions();
      seen.wentBack = heads.wentBack();
      head = heads.latest()?.number;
    } else if (now - seen.lanesCheckedAt >= polledLaneCheckMs) {
      suspected = true;
    }
    // The highest block the network showed since (the blocks of the receipts read, the heads pushed).
    const shown = chain.highestSince();
    if (shown !== undefined && (seen.highest === undefined || shown > seen.highest)) seen.highest = shown;
    if (head !== undefined) {
      if (seen.highest !== undefined && head < seen.highest) suspected = true;
      // A node that went back counts from its new head: the next sign is a head below that one.
      seen.highest = suspected || seen.highest === undefined || head > seen.highest ? head : seen.highest;
    }
    if (suspected) seen.lanesCheckedAt = now;
    return suspected;
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
        const lost = await reopenLost(network, address);
        const { pending, finished, failed } = await finishUnmined(network, address);
        revertedAgain(network, address, lost, failed);
        await sender.resyncNonce(network, address);
        if (pending > 0) logger.info({ network, lane: address, pending, finished }, 'recovered journaled transactions');
        finishedAll += finished;
      }
      return finishedAll;
    },

    async rebroadcastStale(network, olderThanMs) {
      let finishedAll = 0;
      // A node we run that lost blocks is restarted and rebuilt by its supervisor (`recover`); one we
      // do not run is watched here, for the lanes that had a transaction mined lately, when it shows
      // a sign of lost blocks.
      const recent = chains[network].managed ? [] : (await Promise.all(deps.lanes.map(async ({ address }) =>
        ((await journal.lastMinedNonce(network, address, clock() - lostBlockWatchMs)) === undefined ? [] : [address])))).flat();
      // A sign seen by a sweep that did not get through the lanes (the database or the node failing
      // meanwhile) stands until one does: the signs themselves are not seen twice.
      const suspected = recent.length > 0 && (unresolved.has(network) || await lostBlocksSuspected(network));
      if (suspected) unresolved.add(network);
      for (const { address } of deps.lanes) {
        if (suspected && recent.includes(address)) {
          const lost = await reopenLost(network, address);
          if (lost.size > 0) {
            // Sent again now, whatever their age: they hold the lane's later nonces.
            const { pending, finished, failed } = await finishUnmined(network, address, { before: Infinity, waitMs: staleReceiptWaitMs });
            revertedAgain(network, address, lost, failed);
            finishedAll += finished;
            logger.info({ network, lane: address, pending, finished }, 'sent again the transactions the chain lost');
            continue;
          }
        }
        const { pending, finished } = await finishUnmined(network, address, { before: clock() - olderThanMs, waitMs: staleReceiptWaitMs });
        if (pending > 0) logger.info({ network, lane: address, pending, finished }, 'rebroadcast journaled transactions left without a receipt');
        finishedAll += finished;
      }
      unresolved.delete(network);
      return finishedAll;
    },
  };
}
