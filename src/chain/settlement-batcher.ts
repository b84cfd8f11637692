import type { Address, LocalAccount } from 'viem';
import type { ChainClients } from './chain-clients.ts';
import { freeLane, type Lane } from './relayer-lanes.ts';
import type { ReceiptWaiter } from './receipt-waiter.ts';
import type { TransactionSender } from './transaction-sender.ts';
import type { RelayResult, SettlementItem } from './relay-types.ts';
import { executedItems, itemKey } from './mined-receipt.ts';
import { batchBaseGas, batchItemGas, encodeSettlement } from './settlement-calldata.ts';
import type { NetworkName } from '#shared/networks.ts';
import { DomainError } from '#shared/errors.ts';
import { errorSummary } from '#shared/redact.ts';
import type { Faults } from '#shared/failpoints.ts';

export interface SettlementBatcher {
  /** `Relayer.settle`: queues the item in its network's open batch and answers it from the batch's receipt. */
  settle(network: NetworkName, settlement: Address, item: SettlementItem): Promise<RelayResult>;
  /** Transfers accepted for settlement and not answered yet (waiting for their batch or its receipt), per network. */
  queue(): Partial<Record<NetworkName, number>>;
}

export interface SettlementBatcherDeps {
  chains: ChainClients;
  sender: Pick<TransactionSender, 'fees' | 'journal' | 'broadcast'>;
  waiter: Pick<ReceiptWaiter, 'finish'>;
  /** The lanes of a network (relayer-lanes.ts). */
  lanes: (network: NetworkName) => Promise<Lane[]>;
  /** As `RelayerDeps.batch`. */
  batch?: { windowMs: number; maxItems: number; blockMarginMs?: number } | undefined;
  /** Called with the size of every settlement batch journaled. */
  onBatch?: ((network: NetworkName, size: number) => void) | undefined;
  /** As `RelayerDeps.faults`. */
  faults?: Faults | undefined;
}

interface PendingItem {
  item: SettlementItem;
  resolve(result: RelayResult): void;
  reject(error: unknown): void;
}

/** The batch a network is filling: sent once its window has passed and a lane is free, or once full. */
interface OpenBatch {
  settlement: Address;
  items: PendingItem[];
  windowPassed: boolean;
  timer: NodeJS.Timeout | undefined;
  /** The block it is held for (local ms), when held for one: the node's answer to its send checks the schedule. */
  expectedAt: number | undefined;
}

/**
 * Users' transfers batched into settlement transactions, spread over the lanes: one open batch per
 * network collects the transfers accepted within its window (or until the block it aims at), then
 * goes out on the least busy lane; each transfer is answered from its batch's receipt.
 */
/** The `authorizations` row that reserved an item: journaled with it, so released or taken with it. */
const rowOf = (item: SettlementItem): string => item.key ?? item.nonce;

export function createSettlementBatcher(deps: SettlementBatcherDeps): SettlementBatcher {
  const { chains, sender, waiter } = deps;
  const windowMs = deps.batch?.windowMs ?? 3;
  const blockMarginMs = deps.batch?.blockMarginMs ?? 250;
  const maxItemsSetting = deps.batch?.maxItems ?? 100;
  const openBatches = new Map<NetworkName, OpenBatch>();
  const queued = new Map<NetworkName, number>();
  const maxItemsByNetwork = new Map<NetworkName, Promise<number>>();
  /** How long the last few batches of each network took from closing to broadcast (ms). */
  const preparations = new Map<NetworkName, number[]>();
  /** The block (its expected local time) the latest batch of each network was held for. */
  const aimedAt = new Map<NetworkName, number>();

  /** Items per batch: the setting, or fewer when the chain's block gas limit cannot hold that many. */
  function maxItemsOf(network: NetworkName): Promise<number> {
    let max = maxItemsByNetwork.get(network);
    if (!max) {
      max = chains[network].client.getBlock({ blockTag: 'latest' }).then((block) => {
        const fit = Number(((block.gasLimit * 9n) / 10n - batchBaseGas) / batchItemGas);
        return Math.max(1, Math.min(maxItemsSetting, fit));
      });
      maxItemsByNetwork.set(network, max);
      max.catch(() => maxItemsByNetwork.delete(network));
    }
    return max;
  }

  function notePreparation(network: NetworkName, ms: number): void {
    const recent = preparations.get(network) ?? [];
    recent.push(ms);
    if (recent.length > 8) recent.shift();
    preparations.set(network, recent);
  }

  /**
   * How long a batch opened now stays open. On a network we do not run whose blocks come at a known
   * interval: until `blockMarginMs`, plus the time a batch takes to prepare, before the next block it
   * can still reach (the one after, when that moment has passed), so one transaction per block
   * carries every transfer accepted meanwhile and none waits for a later block than it would have
   * reached alone. Otherwise (a chain that mines on demand, or whose interval is not learnt yet):
   * `windowMs`.
   */
  /**
   * How long a batch of the network takes from closing to broadcast: the slowest of the last few, at
   * most half a block or half a second, whichever is longer (a block shorter than that is aimed at a
   * few blocks ahead: docs/decisions/settlement.md).
   */
  function preparationOf(network: NetworkName, interval: number): number {
    return Math.min(Math.max(0, ...(preparations.get(network) ?? [])), Math.max(interval / 2, 500));
  }

  /**
   * A batch held for a block it can no longer reach (its timer fired late: a busy event loop, every
   * lane still journaling) would land in the next block beside that block's own batch: it is held
   * for the next block instead, and keeps filling meanwhile. True when it was.
   */
  function reaimed(network: NetworkName, open: OpenBatch, lanes: Lane[]): boolean {
    const interval = chains[network].blocks.intervalMs();
    if (open.expectedAt === undefined || interval === undefined) return false;
    const now = Date.now();
    const preparation = preparationOf(network, interval);
    if (now + preparation <= open.expectedAt - blockMarginMs / 2) return false;
    while (now + preparation > open.expectedAt - blockMarginMs / 2) open.expectedAt += interval;
    aimedAt.set(network, open.expectedAt);
    open.windowPassed = false;
    // Stryker disable next-line CallExpression: the batch's timer has fired already (its window passed), so clearing it changes nothing (equivalent)
    clearTimeout(open.timer);
    open.timer = setTimeout(() => { open.windowPassed = true; sendOpenBatch(network, lanes, false); }, open.expectedAt - blockMarginMs - preparation - now);
    return true;
  }

  function closeDelay(network: NetworkName): { delay: number; expectedAt?: number } {
    const { managed, blocks } = chains[network];
    const now = Date.now();
    const due = managed ? undefined : blocks.nextBlockAt(now);
    const interval = blocks.intervalMs();
    if (due === undefined || interval === undefined) return { delay: windowMs };
    // The batch must also be journaled, signed and broadcast before the margin: as long as the
    // slowest of the last few took (a busy database or node), at most half a block.
    const preparation = preparationOf(network, interval);
    let close = due - blockMarginMs - preparation;
    // A block the previous batch was held for is not aimed at again (its prediction may have moved a
    // little since): one settlement transaction per block.
    const previous = aimedAt.get(network);
    while (close < now + windowMs || (previous !== undefined && close + blockMarginMs + preparation < previous + interval / 2)) close += interval;
    const expectedAt = close + blockMarginMs + preparation;
    aimedAt.set(network, expectedAt);
    return { delay: close - now, expectedAt };
  }

  /**
   * Sends the network's open batch on a free lane: once its window has passed (or at once when full).
   * While every lane is still journaling a batch, the open one keeps filling: under load, batches
   * grow instead of queueing up behind each other.
   */
  function sendOpenBatch(network: NetworkName, lanes: Lane[], full: boolean): void {
    const open = openBatches.get(network);
    if (!open || (!full && !open.windowPassed)) return;
    if (!full && reaimed(network, open, lanes)) return;
    const lane = freeLane(lanes) ?? (full ? leastBusy(lanes) : undefined);
    if (!lane) return;
    clearTimeout(open.timer);
    openBatches.delete(network);
    dispatch(network, lanes, lane, open.settlement, open.items, open.expectedAt);
  }

  /** A lane of the least batches in flight, preparing or not. */
  const leastBusy = (lanes: Lane[]): Lane => lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));

  /** Relays `items` as one transaction on `lane`; once prepared, the open batch may go out. */
  function dispatch(network: NetworkName, lanes: Lane[], lane: Lane, settlement: Address, items: PendingItem[], expectedAt: number | undefined): void {
    lane.preparing++;
    lane.inFlight++;
    let prepared = false;
    const closedAt = Date.now();
    const done = () => {
      if (prepared) return;
      prepared = true;
      lane.preparing--;
      notePreparation(network, Date.now() - closedAt);
      sendOpenBatch(network, lanes, false);
    };
    relayBatch(network, lane.account, settlement, items, expectedAt, done)
      .catch((error: unknown) => { for (const pending of items) pending.reject(error); })
      .finally(() => {
        lane.inFlight--;
        done();
      });
  }

  /** Journals, signs and broadcasts one batch (then calls `prepared`), and answers each item from its receipt. */
  async function relayBatch(network: NetworkName, account: LocalAccount, settlement: Address, batch: PendingItem[], expectedAt: number | undefined,
    prepared: () => void): Promise<void> {
    const fees = await sender.fees(network, account.address);
    const byNonce = new Map(batch.map((pending) => [rowOf(pending.item), pending]));
    deps.faults?.at('relay.before-journal');
    const journaled = await sender.journal(
      network, account, { intent: { kind: 'settlement', contractAddress: settlement }, authorizationNonces: [...byNonce.keys()] }, fees,
      // What is still reserved when journaled: a batch of one goes to its token directly (settlement-calldata.ts).
      (included) => encodeSettlement(settlement, included.map((key) => (byNonce.get(key) as PendingItem).item)),
    );
    const included = journaled === 'released' ? new Set<string>() : new Set(journaled.included);
    for (const pending of batch) {
      if (!included.has(rowOf(pending.item))) {
        pending.reject(new DomainError('chain.transaction_failed', 'the transfer authorization was released before it was sent'));
      }
    }
    if (journaled === 'released') return;
    deps.onBatch?.(network, included.size);
    deps.faults?.at('relay.after-journal');
    // The block that carries it checks the schedule: one made at once, well before the block it was
    // held for, is a node that mines on demand (block-schedule.ts).
    const carried = chains[network].blocks.sent(Date.now(), expectedAt);
    await sender.broadcast(network, journaled.rawTx);
    deps.faults?.at('relay.after-broadcast');
    prepared();
    const result = await waiter.finish(network, journaled.id, [journaled.txHash]);
    if (result.receipt) carried(result.receipt.blockNumber);
    const executed = result.receipt ? executedItems(result.receipt) : new Set<string>();
    for (const pending of batch) {
      // Stryker disable next-line ConditionalExpression: a transfer not included was refused above; resolving its settled promise changes nothing (equivalent)
      if (!included.has(rowOf(pending.item))) continue;
      const { item } = pending;
      if (!result.receipt) pending.resolve(result);
      else pending.resolve({ ...result, status: executed.has(itemKey(item.token, item.from, item.nonce)) ? 'confirmed' : 'failed' });
    }
  }

  return {
    async settle(network, settlement, item) {
      let lanes: Lane[];
      let maxItems: number;
      try {
        [lanes, maxItems] = await Promise.all([deps.lanes(network), maxItemsOf(network)]);
      } catch (cause) {
        throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
      }
      queued.set(network, (queued.get(network) ?? 0) + 1);
      return new Promise<RelayResult>((resolve, reject) => {
        // A contract account's signature goes alone, at once, in the token's bytes form (settlement-calldata.ts).
        if (item.alone) {
          dispatch(network, lanes, freeLane(lanes) ?? leastBusy(lanes), settlement, [{ item, resolve, reject }], undefined);
          return;
        }
        let open = openBatches.get(network);
        if (!open) {
          const { delay, expectedAt } = closeDelay(network);
          const opened: OpenBatch = { settlement, items: [], windowPassed: false, timer: undefined, expectedAt };
          opened.timer = setTimeout(() => { opened.windowPassed = true; sendOpenBatch(network, lanes, false); }, delay);
          openBatches.set(network, opened);
          open = opened;
        }
        if (open.settlement !== settlement) {
          reject(new Error('one network has one settlement contract'));
          return;
        }
        open.items.push({ item, resolve, reject });
        if (open.items.length >= maxItems) sendOpenBatch(network, lanes, true);
      }).finally(() => queued.set(network, (queued.get(network) ?? 1) - 1));
    },

    queue: () => Object.fromEntries(queued),
  };
}
