import type { Address, LocalAccount, TransactionReceipt } from 'viem';
import type { ChainClients } from './chain-clients.ts';
import { freeLane, type Lane } from './relayer-lanes.ts';
import type { ReceiptWaiter } from './receipt-waiter.ts';
import type { TransactionCall, TransactionSender } from './transaction-sender.ts';
import type { RelayResult, SettlementItem } from './relay-types.ts';
import { executedItems, itemKey } from './mined-receipt.ts';
import { batchBaseGas, batchItemGas, encodeSettlement } from './settlement-calldata.ts';
import { createSettlementAim } from './settlement-aim.ts';
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
  /** How its batches are encoded and read back: EIP-3009 authorizations (the default) or account transfers (account-settlement.ts). */
  layout?: BatchLayout | undefined;
}

/** A kind of settlement item: the transaction settling a batch of them, and which of them its receipt executed. */
export interface BatchLayout {
  /** The transaction settling `items` (in this order, at least one) through `settlement`. */
  encode(settlement: Address, items: readonly SettlementItem[]): TransactionCall;
  /** The `itemKey`s of `items` (as `encode` was given them) that `receipt` executed. */
  executed(receipt: TransactionReceipt, items: readonly SettlementItem[]): ReadonlySet<string>;
  /** Gas limit per item, beside `batchBaseGas`: how many fit in a block. */
  itemGas: bigint;
}

/** EIP-3009 authorizations through VixpSettlement (settlement-calldata.ts), their `AuthorizationUsed` logs read back. */
export const eip3009BatchLayout: BatchLayout = { encode: encodeSettlement, executed: (receipt) => executedItems(receipt), itemGas: batchItemGas };

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
  const layout = deps.layout ?? eip3009BatchLayout;
  const windowMs = deps.batch?.windowMs ?? 3;
  const blockMarginMs = deps.batch?.blockMarginMs ?? 250;
  const maxItemsSetting = deps.batch?.maxItems ?? 100;
  const openBatches = new Map<NetworkName, OpenBatch>();
  const queued = new Map<NetworkName, number>();
  const maxItemsByNetwork = new Map<NetworkName, Promise<number>>();
  const aim = createSettlementAim(chains, { windowMs, blockMarginMs });

  /** Items per batch: the setting, or fewer when the chain's block gas limit cannot hold that many. */
  function maxItemsOf(network: NetworkName): Promise<number> {
    let max = maxItemsByNetwork.get(network);
    if (!max) {
      max = chains[network].client.getBlock({ blockTag: 'latest' }).then((block) => {
        const fit = Number(((block.gasLimit * 9n) / 10n - batchBaseGas) / layout.itemGas);
        return Math.max(1, Math.min(maxItemsSetting, fit));
      });
      maxItemsByNetwork.set(network, max);
      max.catch(() => maxItemsByNetwork.delete(network));
    }
    return max;
  }

  /**
   * A batch held for a block it can no longer reach (its timer fired late: a busy event loop, every
   * lane still journaling) would land in the next block beside that block's own batch: it is held
   * for the next block instead, and keeps filling meanwhile. True when it was.
   */
  function reaimed(network: NetworkName, open: OpenBatch, lanes: Lane[]): boolean {
    const next = open.expectedAt === undefined ? undefined : aim.reaim(network, open.expectedAt);
    if (!next) return false;
    open.expectedAt = next.expectedAt;
    open.windowPassed = false;
    // Stryker disable next-line CallExpression: the batch's timer has fired already (its window passed), so clearing it changes nothing (equivalent)
    clearTimeout(open.timer);
    open.timer = setTimeout(() => { open.windowPassed = true; sendOpenBatch(network, lanes, false); }, next.delay);
    return true;
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
    if (full && !open.windowPassed && open.expectedAt !== undefined) aim.leftFull(network);
    dispatch(network, lanes, lane, open.settlement, open.items, open.expectedAt);
  }

  /** A lane of the least batches in flight, preparing or not. */
  const leastBusy = (lanes: Lane[]): Lane => lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a));

  /** Relays `items` as one transaction on `lane`; once prepared, the open batch may go out. */
  function dispatch(network: NetworkName, lanes: Lane[], lane: Lane, settlement: Address, items: PendingItem[], expectedAt: number | undefined): void {
    lane.preparing++;
    lane.inFlight++;
    let prepared = false;
    const done = () => {
      if (prepared) return;
      prepared = true;
      lane.preparing--;
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
    const closedAt = Date.now();
    const fees = await sender.fees(network, account.address);
    const byNonce = new Map(batch.map((pending) => [rowOf(pending.item), pending]));
    deps.faults?.at('relay.before-journal');
    const journaled = await sender.journal(
      network, account, { intent: { kind: 'settlement', contractAddress: settlement }, authorizationNonces: [...byNonce.keys()] }, fees,
      // What is still reserved when journaled: a batch of one goes to its token directly (settlement-calldata.ts).
      (included) => layout.encode(settlement, included.map((key) => (byNonce.get(key) as PendingItem).item)),
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
    // A batch held for a block waits for its turn: no two land in one block.
    const turn = expectedAt === undefined ? 0 : aim.turnIn(network, expectedAt);
    const turnFrom = Date.now();
    if (turn > 0) await new Promise((resolve) => setTimeout(resolve, turn));
    const waited = Date.now() - turnFrom;
    // The block that carries it checks the schedule: one made at once, well before the block its
    // broadcast is predicted to land in, is a node that mines on demand (block-schedule.ts).
    const landsAt = expectedAt !== undefined ? aim.broadcast(network) : undefined;
    const carried = chains[network].blocks.sent(Date.now(), landsAt ?? expectedAt);
    await sender.broadcast(network, journaled.rawTx);
    aim.notePreparation(network, Date.now() - closedAt - waited);
    deps.faults?.at('relay.after-broadcast');
    prepared();
    const result = await waiter.finish(network, journaled.id, [journaled.txHash]);
    if (result.receipt) carried(result.receipt.blockNumber);
    const executed = result.receipt ? layout.executed(result.receipt, journaled.included.map((key) => (byNonce.get(key) as PendingItem).item)) : new Set<string>();
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
          const { delay, expectedAt } = aim.closeDelay(network);
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
