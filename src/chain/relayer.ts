import { keccak256, parseEventLogs, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import type { ChainJournal, ChainTxStatus, JournalIntent, SignTransaction } from './chain-journal.ts';
import { repriceStale } from './reprice-stale.ts';
import { positionOf, rebuildLostBlocks } from './anvil-rebuild-lost-blocks.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { DomainError } from '../shared/errors.ts';
import { errorSummary } from '../shared/redact.ts';
import type { ChainClients } from './chain-clients.ts';
import { ReceiptNotFinalError } from './receipt-watcher.ts';
import type { NetworkName } from '../shared/networks.ts';
import { batchBaseGas, batchItemGas, encodeSettlement } from './settlement-calldata.ts';
import { vixpTokenAbi } from '../gen/contracts/vixp-token.ts';
import { failpoint } from '../shared/failpoints.ts';

/** What a relayed transaction is for; journaled beside it. */
export type RelayIntent = JournalIntent & { kind: 'settlement' | 'deploy' | 'mint' | 'cancel-authorization' | (string & {}) };

export interface RelayRequest {
  /** Omitted for a contract deployment. */
  to?: Address;
  data: Hex;
  intent: RelayIntent;
}

export interface RelayResult {
  txHash: Hex;
  /**
   * `signed`: not mined within the wait (recovery rebroadcasts it); `failed`: mined and reverted or,
   * for a settlement item, mined without executing that item; `confirmed`: executed.
   */
  status: ChainTxStatus;
  receipt?: TransactionReceipt;
}

/** One EIP-3009 transfer authorization, signed by its holder, for a settlement batch. */
export interface SettlementItem {
  token: Address;
  from: Address;
  to: Address;
  value: bigint;
  validBefore: bigint;
  nonce: Hex;
  /** The holder's packed (r || s || v) signature of TransferWithAuthorization. */
  signature: Hex;
}

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
   * mined without executing it.
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
}

/** What a mined transaction of the relayer cost, from its receipt. */
export interface MinedCost {
  blockNumber: bigint;
  gasUsed: bigint;
  /** Gas used × effective gas price, in wei. */
  feeWei: bigint;
  /** The transfer authorizations it executed (0 for a deployment, a mint or a cancellation). */
  transfers: number;
}

/** A transaction pending this long on an automining chain we run gets a block mined for it. */
const nudgeAfterMs = 1_000;
/** How long a sweep of stale transactions waits for their receipts (the next sweep waits again). */
const staleReceiptWaitMs = 3_000;
/** A lane needs this much native balance to be used on a node we do not run (gas of a full batch, roughly). */
const laneMinimumGasWei = 10n ** 16n;
/**
 * On a node we do not run, a lane whose transactions were recorded mined within this window has its
 * nonce on chain checked at each stale sweep: a node that lost recent blocks (restarted from an older
 * state, a provider failing over to one that lags, a reorg deeper than CONFIRMATIONS) shows a nonce
 * below the journal's. One eth_getTransactionCount per such lane and sweep; none for an idle lane.
 */
const lostBlockWatchMs = 10 * 60_000;

interface PendingItem {
  item: SettlementItem;
  resolve(result: RelayResult): void;
  reject(error: unknown): void;
}

interface Lane {
  account: LocalAccount;
  /** Batches of this lane being journaled and broadcast (their receipt waits do not count). */
  preparing: number;
  /** Batches sent and not answered yet. */
  inFlight: number;
}

/** The batch a network is filling: sent once its window has passed and a lane is free, or once full. */
interface OpenBatch {
  settlement: Address;
  items: PendingItem[];
  windowPassed: boolean;
  timer: NodeJS.Timeout | undefined;
}

/**
 * The platform's relayer: it pays the gas of every transaction the platform sends. Each one is
 * journaled (nonce, signed bytes, hash) before it is broadcast, so a crash anywhere is finished by
 * `recover` with the same bytes: exactly once, no nonce gap. Users' transfers are batched into
 * settlement transactions spread over several lanes (accounts), so neither one nonce sequence nor
 * one slow transaction bounds the rate.
 */
export function createRelayer(deps: RelayerDeps): Relayer {
  const { journal, chains, clock, logger } = deps;
  const receiptTimeoutMs = deps.receiptTimeoutMs ?? 60_000;
  const repricing = deps.repricing ?? { afterMs: 30_000, maxFeePerGas: 500n * 10n ** 9n };
  const windowMs = deps.batch?.windowMs ?? 3;
  const blockMarginMs = deps.batch?.blockMarginMs ?? 250;
  const maxItemsSetting = deps.batch?.maxItems ?? 100;
  const [platform] = deps.lanes;
  if (!platform) throw new Error('the relayer needs at least one lane');
  const platformAccount: LocalAccount = platform;
  const synced = new Set<string>();
  const lanesByNetwork = new Map<NetworkName, Promise<Lane[]>>();
  const openBatches = new Map<NetworkName, OpenBatch>();
  const queued = new Map<NetworkName, number>();
  const maxItemsByNetwork = new Map<NetworkName, Promise<number>>();

  /** The stored next nonce never trails the chain's pending nonce (first use, or another sender). */
  async function syncNonce(network: NetworkName, address: Address): Promise<void> {
    const key = `${network}:${address}`;
    if (synced.has(key)) return;
    const onChain = await chains[network].client.getTransactionCount({ address, blockTag: 'pending' });
    await journal.syncNonce(network, address, onChain);
    synced.add(key);
  }

  /**
   * anvil's automine can leave a ready transaction in its pool until another one arrives (foundry
   * issue 10122, seen here under concurrent lanes): on a chain we run, a transaction still pending
   * after `nudgeAfterMs` while automine is on gets a block mined for it. A chain whose mining a
   * test paused (automine off) is left alone.
   */
  function nudgeManagedMining(network: NetworkName, txHash: Hex): () => void {
    const { client, managed } = chains[network];
    if (!managed) return () => undefined;
    const timer = setTimeout(() => {
      void (async () => {
        const automine = await client.request({ method: 'anvil_getAutomine' as never }) as unknown as boolean;
        const tx = await client.getTransaction({ hash: txHash }).catch(() => undefined);
        if (automine && tx && tx.blockNumber === null) await client.request({ method: 'evm_mine' as never });
      })().catch(() => undefined);
    }, nudgeAfterMs);
    return () => clearTimeout(timer);
  }

  /** The final receipt; `replaced` when another transaction took its nonce; undefined while it may still be mined. */
  async function waitForReceipt(network: NetworkName, txHash: Hex, timeoutMs = receiptTimeoutMs): Promise<TransactionReceipt | 'replaced' | undefined> {
    const stopNudge = nudgeManagedMining(network, txHash);
    try {
      return await chains[network].receipts.wait(txHash, timeoutMs);
    } catch (cause) {
      if (cause instanceof ReceiptNotFinalError && cause.reason === 'replaced') return 'replaced';
      // Reorged out, dropped from the pool or slow: still minable with its nonce; recovery and the
      // stale-transaction sweep send it again.
      logger.warn({ network, txHash, reason: errorSummary(cause) }, 'no receipt yet; left for recovery');
      return undefined;
    } finally {
      stopNudge();
    }
  }

  /** Waits of this process for a journaled transaction (by id), told of each version re-priced meanwhile. */
  const versionWaits = new Map<string, Set<(hash: Hex) => void>>();

  /**
   * The first final receipt of any version of the journaled transaction `id` (one nonce: at most one
   * can be mined): `hashes`, and those this process re-prices while it waits. `replaced` when every
   * one had its nonce taken, undefined otherwise.
   */
  function waitForAny(network: NetworkName, id: string, hashes: readonly Hex[], timeoutMs = receiptTimeoutMs): Promise<TransactionReceipt | 'replaced' | undefined> {
    const deadline = Date.now() + timeoutMs;
    let watch: ((hash: Hex) => void) | undefined;
    return new Promise<TransactionReceipt | 'replaced' | undefined>((resolve) => {
      let left = 0;
      let replaced = false;
      watch = (hash: Hex) => {
        left++;
        void waitForReceipt(network, hash, Math.max(1, deadline - Date.now())).then((outcome) => {
          if (outcome && outcome !== 'replaced') resolve(outcome);
          if (outcome === 'replaced') replaced = true;
          if (--left === 0) resolve(replaced ? 'replaced' : undefined);
        });
      };
      const listeners = versionWaits.get(id) ?? new Set();
      versionWaits.set(id, listeners.add(watch));
      for (const hash of hashes) watch(hash);
    }).finally(() => {
      const listeners = versionWaits.get(id);
      if (watch) listeners?.delete(watch);
      if (listeners?.size === 0) versionWaits.delete(id);
    });
  }

  /**
   * The final receipt (per `CONFIRMATIONS`) of whichever version of the journaled transaction `id`
   * the chain has mined, if any: the version is found by its receipt, then waited for like any other.
   */
  async function minedVersion(network: NetworkName, id: string, timeoutMs = receiptTimeoutMs): Promise<TransactionReceipt | 'replaced' | undefined> {
    for (const hash of await journal.hashesOf(id)) {
      const receipt = await chains[network].client.getTransactionReceipt({ hash: hash as Hex }).catch(() => undefined);
      if (receipt) return waitForReceipt(network, hash as Hex, timeoutMs);
    }
    return undefined;
  }

  /**
   * Waits for the journaled transaction `id` (any of its versions `hashes`) and records the outcome.
   * The answered hash is the version mined: after a re-pricing, not necessarily the one first sent.
   */
  async function finish(network: NetworkName, id: string, hashes: readonly Hex[], timeoutMs?: number): Promise<RelayResult> {
    let receipt = await waitForAny(network, id, hashes, timeoutMs);
    // Its nonce was taken, or no receipt came: a version re-priced elsewhere (another instance) may hold it.
    if (receipt === 'replaced') receipt = (await minedVersion(network, id, timeoutMs)) ?? 'replaced';
    else if (!receipt) {
      const mined = await minedVersion(network, id, timeoutMs);
      receipt = mined === 'replaced' ? undefined : mined;
    }
    if (!receipt) return { txHash: ((await journal.hashesOf(id))[0] ?? hashes[0]) as Hex, status: 'signed' };
    if (receipt === 'replaced') {
      // Nothing of it executed: its settlement items are settled by the chain (cancelled or expired).
      logger.error({ network, txHash: hashes[0] }, 'another transaction took this transaction\'s nonce: it can never be mined');
      await journal.markReplaced(id, clock());
      return { txHash: hashes[0] as Hex, status: 'failed' };
    }
    const status = receipt.status === 'success' ? 'confirmed' : 'failed';
    await journal.markMined(id, status, positionOf(receipt), clock(), receipt.transactionHash);
    deps.onMined?.(network, {
      blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed, feeWei: receipt.gasUsed * (receipt.effectiveGasPrice ?? 0n), transfers: usedNonces(receipt).length,
    });
    return { txHash: receipt.transactionHash, status, receipt };
  }

  async function broadcast(network: NetworkName, rawTx: Hex): Promise<void> {
    try {
      await chains[network].client.sendRawTransaction({ serializedTransaction: rawTx });
    } catch (cause) {
      // "already known" / "nonce too low" after a crash mean the node has (or had) it: the
      // receipt wait decides. Anything else is reported by that wait timing out, and stays journaled.
      // The node's error quotes the signed transaction: log only a summary.
      logger.warn({ network, reason: errorSummary(cause) }, 'broadcast failed; waiting for a receipt anyway');
    }
  }

  async function feesOf(network: NetworkName, account: Address) {
    try {
      await syncNonce(network, account);
      return await chains[network].client.estimateFeesPerGas();
    } catch (cause) {
      throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
    }
  }

  /** Signs an EIP-1559 transaction of `account` at the nonce the journal hands out. */
  function signer(network: NetworkName, account: LocalAccount, fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }, gas: bigint,
    to: Address | undefined, dataFor: (included: readonly string[]) => Hex): SignTransaction {
    const { chainId } = chains[network];
    return async (nonce, included) => {
      const rawTx = await account.signTransaction({
        chainId, type: 'eip1559', nonce, to: to ?? null, data: dataFor(included), value: 0n, gas,
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      return { rawTx, txHash: keccak256(rawTx) };
    };
  }

  async function submit(network: NetworkName, request: RelayRequest): Promise<RelayResult> {
    const fees = await feesOf(network, platformAccount.address);
    let gas: bigint;
    try {
      gas = await chains[network].client.estimateGas({ account: platformAccount.address, to: request.to, data: request.data });
    } catch (cause) {
      // The node's error quotes the calldata, which may carry a signature: keep only a summary,
      // never the error itself, so no log line or reply can carry it.
      throw new DomainError('chain.transaction_failed', `the transaction would revert (${errorSummary(cause)})`);
    }
    const journaled = await journal.journal(
      { network, relayer: platformAccount.address, intent: request.intent }, clock(),
      signer(network, platformAccount, fees, (gas * 12n) / 10n, request.to, () => request.data),
    );
    if (journaled === 'released') throw new Error('a transaction without authorizations cannot be released');
    await broadcast(network, journaled.rawTx as Hex);
    return finish(network, journaled.id, [journaled.txHash as Hex]);
  }

  /** The lanes usable on a network: on a node we do not run, only those with gas money (the first always). */
  function lanesOf(network: NetworkName): Promise<Lane[]> {
    let lanes = lanesByNetwork.get(network);
    if (!lanes) {
      const newLane = (account: LocalAccount): Lane => ({ account, preparing: 0, inFlight: 0 });
      lanes = (async () => {
        const [first, ...others] = deps.lanes;
        if (chains[network].managed || !first) return deps.lanes.map(newLane);
        const funded = await Promise.all(others.map(async (account) =>
          (await chains[network].client.getBalance({ address: account.address }).catch(() => 0n)) >= laneMinimumGasWei));
        const unfunded = others.filter((_, i) => !funded[i]).map((a) => a.address);
        if (unfunded.length > 0) logger.warn({ network, unfunded }, 'relayer lanes without gas are not used: fund them');
        return [first, ...others.filter((_, i) => funded[i])].map(newLane);
      })();
      lanesByNetwork.set(network, lanes);
      lanes.catch(() => lanesByNetwork.delete(network));
    }
    return lanes;
  }

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

  /** A lane not preparing a batch, the one with the fewest batches in flight; none when all are preparing. */
  function freeLane(lanes: Lane[]): Lane | undefined {
    let best: Lane | undefined;
    for (const lane of lanes) {
      if (lane.preparing === 0 && (!best || lane.inFlight < best.inFlight)) best = lane;
    }
    return best;
  }

  async function settle(network: NetworkName, settlement: Address, item: SettlementItem): Promise<RelayResult> {
    let lanes: Lane[];
    let maxItems: number;
    try {
      [lanes, maxItems] = await Promise.all([lanesOf(network), maxItemsOf(network)]);
    } catch (cause) {
      throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
    }
    queued.set(network, (queued.get(network) ?? 0) + 1);
    return new Promise<RelayResult>((resolve, reject) => {
      let open = openBatches.get(network);
      if (!open) {
        const opened: OpenBatch = { settlement, items: [], windowPassed: false, timer: undefined };
        opened.timer = setTimeout(() => { opened.windowPassed = true; sendOpenBatch(network, lanes, false); }, closeDelay(network));
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
  }

  /** How long the last few batches of each network took from closing to broadcast (ms). */
  const preparations = new Map<NetworkName, number[]>();
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
  function closeDelay(network: NetworkName): number {
    const { managed, blocks } = chains[network];
    const now = Date.now();
    const due = managed ? undefined : blocks.nextBlockAt(now);
    const interval = blocks.intervalMs();
    if (due === undefined || interval === undefined) return windowMs;
    // The batch must also be journaled, signed and broadcast before the margin: as long as the
    // slowest of the last few took (a busy database or node), at most half a block.
    const preparation = Math.min(Math.max(0, ...(preparations.get(network) ?? [])), interval / 2);
    let close = due - blockMarginMs - preparation;
    while (close < now + windowMs) close += interval;
    return close - now;
  }

  /**
   * Sends the network's open batch on a free lane: once its window has passed (or at once when full).
   * While every lane is still journaling a batch, the open one keeps filling: under load, batches
   * grow instead of queueing up behind each other.
   */
  function sendOpenBatch(network: NetworkName, lanes: Lane[], full: boolean): void {
    const open = openBatches.get(network);
    if (!open || (!full && !open.windowPassed)) return;
    const lane = freeLane(lanes) ?? (full ? lanes.reduce((a, b) => (b.inFlight < a.inFlight ? b : a)) : undefined);
    if (!lane) return;
    clearTimeout(open.timer);
    openBatches.delete(network);
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
    relayBatch(network, lane.account, open.settlement, open.items, done)
      .catch((error: unknown) => { for (const pending of open.items) pending.reject(error); })
      .finally(() => {
        lane.inFlight--;
        done();
      });
  }

  /** Journals, signs and broadcasts one batch (then calls `prepared`), and answers each item from its receipt. */
  async function relayBatch(network: NetworkName, account: LocalAccount, settlement: Address, batch: PendingItem[], prepared: () => void): Promise<void> {
    const fees = await feesOf(network, account.address);
    const byNonce = new Map(batch.map((pending) => [pending.item.nonce as string, pending]));
    failpoint('relay.before-journal');
    const journaled = await journal.journal(
      { network, relayer: account.address, intent: { kind: 'settlement', contractAddress: settlement }, authorizationNonces: [...byNonce.keys()] },
      clock(),
      (nonce, included) => {
        // What is still reserved when journaled: a batch of one goes to its token directly (settlement-calldata.ts).
        const call = encodeSettlement(settlement, included.map((key) => (byNonce.get(key) as PendingItem).item));
        return signer(network, account, fees, call.gas, call.to, () => call.data)(nonce, included);
      },
    );
    const included = journaled === 'released' ? new Set<string>() : new Set(journaled.included);
    for (const pending of batch) {
      if (!included.has(pending.item.nonce)) {
        pending.reject(new DomainError('chain.transaction_failed', 'the transfer authorization was released before it was sent'));
      }
    }
    if (journaled === 'released') return;
    deps.onBatch?.(network, included.size);
    failpoint('relay.after-journal');
    await broadcast(network, journaled.rawTx as Hex);
    failpoint('relay.after-broadcast');
    prepared();
    const result = await finish(network, journaled.id, [journaled.txHash as Hex]);
    const executed = result.receipt ? executedItems(result.receipt) : new Set<string>();
    for (const pending of batch) {
      if (!included.has(pending.item.nonce)) continue;
      const { item } = pending;
      if (!result.receipt) pending.resolve(result);
      else pending.resolve({ ...result, status: executed.has(itemKey(item.token, item.from, item.nonce)) ? 'confirmed' : 'failed' });
    }
  }

  async function finishUnmined(network: NetworkName, address: Address, stale?: { before: number; waitMs: number }): Promise<{ pending: number; finished: number }> {
    const pending = (await journal.listUnmined(network, address))
      .filter((tx) => stale === undefined || tx.createdAt < stale.before);
    const account = deps.lanes.find((lane) => lane.address === address);
    if (stale && account) {
      await repriceStale({
        journal, chain: chains[network], account, ...repricing, now: clock, logger,
        onRepriced: (tx) => {
          deps.onReprice?.(network);
          for (const watch of versionWaits.get(tx.id) ?? []) watch(tx.txHash as Hex);
        },
      }, pending);
    }
    for (const tx of pending) await broadcast(network, tx.rawTx as Hex);
    const results = await Promise.all(pending.map((tx) => finish(network, tx.id, [tx.txHash, ...tx.supersededHashes] as Hex[], stale?.waitMs)));
    // Nobody waits for these any more: their authorizations are recorded used from the receipts.
    for (const { receipt } of results) {
      if (receipt) await journal.markAuthorizationsUsed(receipt.transactionHash, usedNonces(receipt), clock());
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
    address: platformAccount.address,
    lanes: deps.lanes.map((lane) => lane.address),
    submit,
    settle,

    async send(network, request) {
      const result = await submit(network, request);
      if (result.status === 'failed') {
        throw new DomainError('chain.transaction_failed', 'the transaction was reverted on chain', { details: result.txHash });
      }
      return result;
    },

    async recover(network) {
      // A node we run that crashed lost the blocks since its last checkpoint: they are mined again
      // first, in their order and at their times, so the transfers in them execute as they did.
      let finishedAll = chains[network].managed
        ? await rebuildLostBlocks(network, { journal, client: chains[network].client, lanes: deps.lanes.map((lane) => lane.address), clock, logger })
        : 0;
      for (const { address } of deps.lanes) {
        // A node that lost blocks (an anvil killed between two state dumps, a reorg) no longer holds
        // transactions we recorded as mined: every journaled one at or above the lane's nonce on
        // chain is sent again, in nonce order, from its journaled bytes (same hash), so none is lost
        // and no later transaction waits behind a gap.
        await reopenLost(network, address);
        const { pending, finished } = await finishUnmined(network, address);
        synced.delete(`${network}:${address}`);
        await syncNonce(network, address);
        if (pending > 0) logger.info({ network, lane: address, pending, finished }, 'recovered journaled transactions');
        finishedAll += finished;
      }
      return finishedAll;
    },

    settlementQueue: () => Object.fromEntries(queued),

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

const itemKey = (token: string, authorizer: string, nonce: string) => `${token.toLowerCase()}:${authorizer.toLowerCase()}:${nonce.toLowerCase()}`;

/** The `AuthorizationUsed(authorizer, nonce)` logs of a successful receipt: the authorizations it executed. */
function usedAuthorizations(receipt: TransactionReceipt) {
  if (receipt.status !== 'success') return [];
  return parseEventLogs({ abi: vixpTokenAbi, eventName: 'AuthorizationUsed', logs: receipt.logs });
}

/** The authorization nonces a receipt shows used. */
function usedNonces(receipt: TransactionReceipt): string[] {
  return usedAuthorizations(receipt).map((log) => log.args.nonce);
}

/** The items a settlement receipt executed: each has its token's `AuthorizationUsed(authorizer, nonce)`. */
function executedItems(receipt: TransactionReceipt): Set<string> {
  return new Set(usedAuthorizations(receipt).map((log) => itemKey(log.address, log.args.authorizer, log.args.nonce)));
}
