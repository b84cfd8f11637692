import type { Address, LocalAccount } from 'viem';
import type { ChainJournal } from './chain-journal.ts';
import type { ChainClients } from './chain-clients.ts';
import type { MinedCost, RelayRequest, RelayResult, SettlementItem } from './relay-types.ts';
import { createTransactionSender } from './transaction-sender.ts';
import { createReceiptWaiter } from './receipt-waiter.ts';
import { createLanes } from './relayer-lanes.ts';
import { createSettlementBatcher } from './settlement-batcher.ts';
import { accountBatchLayout } from './account-settlement.ts';
import { createRelayerRecovery } from './relayer-recovery.ts';
import { nudgeAnvilMining } from './anvil-mining.ts';
import { rebuildLostBlocks } from './anvil-rebuild-lost-blocks.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import type { Faults } from '#shared/failpoints.ts';

export type { MinedCost, RelayIntent, RelayRequest, RelayResult, SettlementItem } from './relay-types.ts';

export interface Relayer {
  /** The platform account: lane 0, the deployer and minter. */
  address: Address;
  /** Every relayer lane's address, the platform account first. */
  lanes: readonly Address[];
  /**
   * Estimates, signs with the platform account's next nonce, journals, then broadcasts, and waits for
   * the receipt. Throws (`chain.transaction_failed` when the node says it would revert,
   * `chain.unavailable`) only when nothing was journaled, so nothing was sent; once journaled,
   * answers the outcome.
   */
  submit(network: NetworkName, request: RelayRequest): Promise<RelayResult>;
  /**
   * `submit` for the platform's own transactions (deployments, mints): also throws
   * `chain.transaction_failed` when it reverted; a transaction not mined within the wait is
   * returned with status `signed` and is finished by `recover`.
   */
  send(network: NetworkName, request: RelayRequest): Promise<RelayResult>;
  /**
   * Settles one reserved authorization through the `settlement` contract (a batch left with one item
   * is sent to its token directly: settlement-calldata.ts), batched with the others
   * accepted within the batch window, on the least busy lane. The journaling transaction marks the
   * authorization submitted with the batch's hash; throws (`chain.transaction_failed` when the
   * authorization was no longer reserved, `chain.unavailable`) only when it was not journaled.
   * `confirmed` when the receipt shows this item's `AuthorizationUsed`; `failed` when the batch was
   * mined without executing it. An account transfer (`item.account`: a token without EIP-3009, moved
   * by a custodial account delegated to VixpayAccount) goes the same way in batches of its own
   * through `settlement` = VixpAccountSettlement (src/chain/account-settlement.ts), `confirmed` when
   * the receipt shows its token's `Transfer` and no `ItemSkipped` of it.
   */
  settle(network: NetworkName, settlement: Address, item: SettlementItem): Promise<RelayResult>;
  /** Finishes every journaled transaction of every lane that has no receipt yet: rebroadcasts, then waits. */
  recover(network: NetworkName): Promise<number>;
  /**
   * Rebroadcasts every lane's journaled transactions older than `olderThanMs` that have no receipt
   * (whoever journaled them: a crashed instance's transaction holds the lane's next nonces for all),
   * and records those mined. Their bytes are the journaled ones, so a rebroadcast never doubles anything.
   * One whose fee cap is below the chain's base fee, or unmined for `repricing.afterMs`, is first
   * re-priced: signed again with its nonce and higher fees, journaled, then sent; whichever version
   * the chain mines is the one recorded.
   */
  rebroadcastStale(network: NetworkName, olderThanMs: number): Promise<number>;
  /** Transfers accepted for settlement and not answered yet (waiting for their batch or its receipt), per network. */
  settlementQueue(): Partial<Record<NetworkName, number>>;
}

export interface RelayerDeps {
  journal: ChainJournal;
  chains: ChainClients;
  /** The lanes, the platform account first (it deploys and mints). */
  lanes: readonly LocalAccount[];
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs?: number;
  /**
   * `windowMs`: on a chain that mines on demand (anvil's automine), a batch is sent this long after
   * its first transfer. `blockMarginMs`: on a chain that mines at intervals, a batch is sent this long
   * before the next block is due (what a transaction needs to reach that block), so that the
   * transfers accepted between two blocks share one transaction.
   */
  batch?: { windowMs: number; maxItems: number; blockMarginMs?: number };
  /** Called with the size of every settlement batch journaled. */
  onBatch?: (network: NetworkName, size: number) => void;
  /**
   * Re-pricing of stale transactions: after how long unmined a transaction is re-priced even when
   * its fee cap is above the base fee, and the highest fee cap a replacement gets (in wei).
   */
  repricing?: { afterMs: number; maxFeePerGas: bigint };
  /** Called for every re-priced version journaled. */
  onReprice?: (network: NetworkName) => void;
  /** Called for every journaled transaction recorded mined: its block, cost, and the transfers it executed. */
  onMined?: (network: NetworkName, mined: MinedCost) => void;
  /** The fault suite's failpoints at a settlement batch's steps (src/shared/failpoints.ts); none unless a test arms them. */
  faults?: Faults;
}

/**
 * The platform's relayer: it pays the gas of every transaction the platform sends. Each one is
 * journaled (nonce, signed bytes, hash) before it is broadcast, so a crash anywhere is finished by
 * `recover` with the same bytes: exactly once, no nonce gap. Users' transfers are batched into
 * settlement transactions spread over several lanes (accounts), so neither one nonce sequence nor
 * one slow transaction bounds the rate. Assembled from its parts: the transaction sender (nonces,
 * fees, signing, journal, broadcast), the receipt waiter, the settlement batcher and its lanes, and
 * recovery (recover, rebroadcast, re-price); on the chains we run, anvil's mining nudge and the
 * rebuilding of lost blocks.
 */
export function createRelayer(deps: RelayerDeps): Relayer {
  const { journal, chains, clock, logger } = deps;
  const [platform] = deps.lanes;
  if (!platform) throw new Error('the relayer needs at least one lane');
  const sender = createTransactionSender({ journal, chains, platform, clock, logger });
  const waiter = createReceiptWaiter({
    journal, chains, clock, logger, receiptTimeoutMs: deps.receiptTimeoutMs ?? 60_000, onMined: deps.onMined, nudge: nudgeAnvilMining,
  });
  // One set of lanes for both kinds of batch: a lane preparing one kind is busy for the other.
  const lanes = createLanes({ chains, lanes: deps.lanes, logger });
  const batcher = createSettlementBatcher({ chains, sender, waiter, lanes, batch: deps.batch, onBatch: deps.onBatch, faults: deps.faults });
  const accountBatcher = createSettlementBatcher({
    chains, sender, waiter, lanes, batch: deps.batch, onBatch: deps.onBatch, faults: deps.faults, layout: accountBatchLayout,
  });
  const recovery = createRelayerRecovery({
    journal, chains, lanes: deps.lanes, clock, logger, sender, waiter,
    repricing: deps.repricing ?? { afterMs: 30_000, maxFeePerGas: 500n * 10n ** 9n }, onReprice: deps.onReprice,
    rebuildLostBlocks: (network) => rebuildLostBlocks(network, { journal, client: chains[network].client, lanes: deps.lanes.map((lane) => lane.address), clock, logger }),
  });

  async function submit(network: NetworkName, request: RelayRequest): Promise<RelayResult> {
    const sent = await sender.send(network, request);
    return waiter.finish(network, sent.id, [sent.txHash]);
  }

  return {
    address: platform.address,
    lanes: deps.lanes.map((lane) => lane.address),
    submit,
    settle: (network, settlement, item) => (item.account ? accountBatcher : batcher).settle(network, settlement, item),
    recover: recovery.recover,
    rebroadcastStale: recovery.rebroadcastStale,
    settlementQueue() {
      const queue = { ...batcher.queue() };
      for (const [network, size] of Object.entries(accountBatcher.queue()) as [NetworkName, number][]) queue[network] = (queue[network] ?? 0) + size;
      return queue;
    },

    async send(network, request) {
      const result = await submit(network, request);
      if (result.status === 'failed') {
        throw new DomainError('chain.transaction_failed', 'the transaction was reverted on chain', { details: result.txHash });
      }
      return result;
    },
  };
}
