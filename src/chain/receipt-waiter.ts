import { TransactionReceiptNotFoundError, type Hex, type PublicClient, type TransactionReceipt } from 'viem';
import type { ChainJournal } from './chain-journal.ts';
import type { ChainClients } from './chain-clients.ts';
import { ReceiptNotFinalError } from './receipt-not-final.ts';
import type { WaitOptions } from './receipt-watcher.ts';
import { executedTransferCount, positionOf } from './mined-receipt.ts';
import { createMinedFacts } from './mined-facts.ts';
import type { MinedCost, RelayResult } from './relay-types.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import { errorSummary } from '#shared/redact.ts';

type Outcome = TransactionReceipt | 'replaced' | undefined;

export interface ReceiptWaiter {
  /**
   * Waits for the journaled transaction `id` (any of its versions `hashes`, and those re-priced
   * meanwhile) and records the outcome: mined (`confirmed` or `failed`), replaced (`failed`: another
   * transaction took its nonce), or, with no receipt within the wait, `signed` (left for recovery).
   * The answered hash is the version mined: after a re-pricing, not necessarily the one first sent.
   * `sentBefore`: sent before this wait (recovery, a sweep): it may be mined already, in a block long past.
   */
  finish(network: NetworkName, id: string, hashes: readonly Hex[], timeoutMs?: number, options?: WaitOptions): Promise<RelayResult>;
  /** Tells this process's waits for `id` of a version of it re-priced (and journaled) meanwhile. */
  repriced(id: string, txHash: Hex): void;
}

export interface ReceiptWaiterDeps {
  journal: ChainJournal;
  chains: ChainClients;
  clock: Clock;
  logger: Logger;
  /** How long a wait lasts by default. */
  receiptTimeoutMs: number;
  /** Called for every journaled transaction recorded mined: its block, cost, and the transfers it executed. */
  onMined?: ((network: NetworkName, mined: MinedCost) => void) | undefined;
  /**
   * On a chain we run (`managed`): started with each wait, answers how to stop it. anvil's
   * (anvil-mining.ts) mines a block for a transaction its automine left pending.
   */
  nudge?: ((client: PublicClient, txHash: Hex) => () => void) | undefined;
}

/** The relayer's waits for receipts (through each network's one receipt watcher), and the journal's record of them. */
export function createReceiptWaiter(deps: ReceiptWaiterDeps): ReceiptWaiter {
  const { journal, chains, clock, logger, receiptTimeoutMs } = deps;
  /** Waits of this process for a journaled transaction (`id`), each told of every version of it re-priced meanwhile. */
  const versionWaits = new Set<{ id: string; watch: (hash: Hex) => void }>();
  /** Per network: the block times (one header read per block) and operator fees recorded beside receipts. */
  const minedFacts = new Map<NetworkName, ReturnType<typeof createMinedFacts>>();
  const factsOf = (network: NetworkName, receipt: TransactionReceipt) => {
    let facts = minedFacts.get(network);
    // Stryker disable next-line ConditionalExpression: equivalent, a reader made anew reads the same header (the one read per block is asserted in mined-receipt.test.ts)
    if (!facts) minedFacts.set(network, facts = createMinedFacts(chains[network].client, (hash) => chains[network].heads?.byHash(hash)?.timestamp));
    return facts(receipt);
  };

  /**
   * The final receipt; `replaced` when another transaction took its nonce; undefined while it may
   * still be mined, why added to `unfinal` (logged once per journaled transaction, by `finish`).
   */
  async function waitForReceipt(network: NetworkName, txHash: Hex, timeoutMs: number, unfinal: string[], options: WaitOptions): Promise<Outcome> {
    const { client, managed, receipts } = chains[network];
    const stopNudge = managed ? deps.nudge?.(client, txHash) : undefined;
    try {
      return await receipts.wait(txHash, timeoutMs, options);
    } catch (cause) {
      if (cause instanceof ReceiptNotFinalError && cause.reason === 'replaced') return 'replaced';
      // Reorged out, dropped from the pool or slow: still minable with its nonce; recovery and the
      // stale-transaction sweep send it again.
      unfinal.push(errorSummary(cause));
      return undefined;
    } finally {
      stopNudge?.();
    }
  }

  /**
   * The first final receipt of any version of the journaled transaction `id` (one nonce: at most one
   * can be mined): `hashes`, and those this process re-prices while it waits. `replaced` when every
   * one had its nonce taken, undefined otherwise.
   */
  function waitForAny(network: NetworkName, id: string, hashes: readonly Hex[], timeoutMs: number, unfinal: string[], options: WaitOptions): Promise<Outcome> {
    const deadline = Date.now() + timeoutMs;
    let wait: { id: string; watch: (hash: Hex) => void } | undefined;
    return new Promise<Outcome>((resolve) => {
      let left = 0;
      let replaced = false;
      const watch = (hash: Hex) => {
        left++;
        // A version re-priced meanwhile is one just sent.
        void waitForReceipt(network, hash, Math.max(1, deadline - Date.now()), unfinal, hashes.includes(hash) ? options : {}).then((outcome) => {
          if (outcome && outcome !== 'replaced') resolve(outcome);
          if (outcome === 'replaced') replaced = true;
          if (--left === 0) resolve(replaced ? 'replaced' : undefined);
        });
      };
      wait = { id, watch };
      versionWaits.add(wait);
      for (const hash of hashes) watch(hash);
    }).finally(() => {
      if (wait) versionWaits.delete(wait);
    });
  }

  /**
   * The final receipt (per `CONFIRMATIONS`) of whichever version of the journaled transaction `id`
   * the chain has mined, if any: the version is found by its receipt, then waited for like any other.
   * `unknown` when the node did not answer for a version (an error, not "no such receipt"): whether
   * one of ours took the nonce is then not known.
   */
  async function minedVersion(network: NetworkName, id: string, timeoutMs: number, unfinal: string[]): Promise<Outcome | 'unknown'> {
    let known = true;
    for (const hash of await journal.hashesOf(id)) {
      const receipt = await chains[network].client.getTransactionReceipt({ hash: hash as Hex }).catch((cause: unknown) => {
        if (!(cause instanceof TransactionReceiptNotFoundError)) {
          known = false;
          unfinal.push(errorSummary(cause));
        }
        return undefined;
      });
      if (receipt) return waitForReceipt(network, hash as Hex, timeoutMs, unfinal, { sentBefore: true });
    }
    return known ? undefined : 'unknown';
  }

  return {
    async finish(network, id, hashes, timeoutMs = receiptTimeoutMs, options = {}) {
      /** Why each version waited for ended without a final receipt. */
      const unfinal: string[] = [];
      let receipt = await waitForAny(network, id, hashes, timeoutMs, unfinal, options);
      // Its nonce was taken, or no receipt came: a version re-priced elsewhere (another instance) may hold it.
      if (typeof receipt !== 'object') {
        const mined = await minedVersion(network, id, timeoutMs, unfinal);
        if (typeof mined === 'object') receipt = mined;
        // A version the node did not answer for may be the one that took the nonce: never recorded
        // replaced (failed, never sent again) on that guess; left for recovery, which looks again.
        else if (mined === 'unknown') receipt = undefined;
      }
      if (!receipt) {
        // The version recovery sends next: the journal's current one.
        const txHash = ((await journal.hashesOf(id))[0] ?? hashes[0]) as Hex;
        // One line per journaled transaction, whatever the number of its versions waited for.
        logger.warn({ network, id, txHash, reasons: unfinal }, 'no receipt yet; left for recovery');
        return { txHash, status: 'signed' };
      }
      if (receipt === 'replaced') {
        // Nothing of it executed: its settlement items are settled by the chain (cancelled or expired).
        logger.error({ network, txHash: hashes[0] }, 'another transaction took this transaction\'s nonce: it can never be mined');
        await journal.markReplaced(id, clock());
        return { txHash: hashes[0] as Hex, status: 'failed' };
      }
      const status = receipt.status === 'success' ? 'confirmed' : 'failed';
      const position = positionOf(receipt, await factsOf(network, receipt));
      await journal.markMined(id, status, position, clock(), receipt.transactionHash);
      deps.onMined?.(network, {
        blockNumber: receipt.blockNumber, gasUsed: receipt.gasUsed, feeWei: position.feeWei ?? 0n,
        l1FeeWei: position.l1FeeWei ?? 0n, operatorFeeWei: position.operatorFeeWei ?? 0n, transfers: executedTransferCount(receipt),
      });
      return { txHash: receipt.transactionHash, status, receipt };
    },

    repriced(id, txHash) {
      for (const wait of versionWaits) if (wait.id === id) wait.watch(txHash);
    },
  };
}
