import { keccak256, type Address, type Hex, type LocalAccount, type TransactionReceipt } from 'viem';
import type { ChainJournal, ChainTxStatus, JournalIntent } from './chain-journal.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { DomainError } from '../shared/errors.ts';
import { errorSummary } from '../shared/redact.ts';
import type { ChainClients } from './chain-clients.ts';
import type { NetworkName } from '../shared/networks.ts';

/** What a relayed transaction is for; journaled beside it. */
export type RelayIntent = JournalIntent & { kind: 'transfer' | 'deploy' | 'mint' | 'cancel-authorization' | (string & {}) };

export interface RelayRequest {
  /** Omitted for a contract deployment. */
  to?: Address;
  data: Hex;
  intent: RelayIntent;
  /**
   * The EIP-3009 authorization the transaction carries: it is marked submitted in the same database
   * transaction that journals it, and nothing is sent if it is no longer reserved.
   */
  authorizationNonce?: Hex;
}

export interface RelayResult {
  txHash: Hex;
  /** `signed`: not mined within the wait (recovery rebroadcasts it); `failed`: mined and reverted. */
  status: ChainTxStatus;
  receipt?: TransactionReceipt;
}

export interface Relayer {
  address: Address;
  /**
   * Estimates, signs with the next nonce, journals, then broadcasts, and waits for the receipt.
   * Throws (`chain.transaction_failed` when the node says it would revert or the authorization was
   * released, `chain.unavailable`) only when nothing was journaled, so nothing was sent; once
   * journaled, answers the outcome.
   */
  submit(network: NetworkName, request: RelayRequest): Promise<RelayResult>;
  /**
   * `submit` for the platform's own transactions (deployments, mints): also throws
   * `chain.transaction_failed` when it reverted; a transaction not mined within the wait is
   * returned with status `signed` and is finished by `recover`.
   */
  send(network: NetworkName, request: RelayRequest): Promise<RelayResult>;
  /** Finishes every journaled transaction that has no receipt yet: rebroadcasts, then waits. */
  recover(network: NetworkName): Promise<number>;
}

export interface RelayerDeps {
  journal: ChainJournal;
  chains: ChainClients;
  account: LocalAccount;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs?: number;
}

/**
 * The platform account as the relayer: it pays the gas of every transaction the platform sends.
 * Each one is journaled (nonce, signed bytes, hash) before it is broadcast, so a crash anywhere is
 * finished by `recover` with the same bytes: exactly once, no nonce gap.
 */
export function createRelayer(deps: RelayerDeps): Relayer {
  const { journal, chains, account, clock, logger } = deps;
  const receiptTimeoutMs = deps.receiptTimeoutMs ?? 60_000;
  const relayer = account.address;
  const synced = new Set<NetworkName>();

  /** The stored next nonce never trails the chain's pending nonce (first use, or another sender). */
  async function syncNonce(network: NetworkName): Promise<void> {
    if (synced.has(network)) return;
    const onChain = await chains[network].client.getTransactionCount({ address: relayer, blockTag: 'pending' });
    await journal.syncNonce(network, relayer, onChain);
    synced.add(network);
  }

  async function finish(network: NetworkName, id: string, txHash: Hex): Promise<RelayResult> {
    let receipt: TransactionReceipt;
    try {
      receipt = await chains[network].receipts.wait(txHash, receiptTimeoutMs);
    } catch (cause) {
      logger.warn({ network, txHash, reason: errorSummary(cause) }, 'no receipt yet; left for recovery');
      return { txHash, status: 'signed' };
    }
    const status = receipt.status === 'success' ? 'confirmed' : 'failed';
    await journal.markMined(id, status, Number(receipt.blockNumber), clock());
    return { txHash, status, receipt };
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

  async function submit(network: NetworkName, request: RelayRequest): Promise<RelayResult> {
    const { client, chainId } = chains[network];
    let gas: bigint;
    let fees: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint };
    try {
      await syncNonce(network);
      fees = await client.estimateFeesPerGas();
    } catch (cause) {
      throw new DomainError('chain.unavailable', `network ${network} does not answer (${errorSummary(cause)})`);
    }
    try {
      gas = await client.estimateGas({ account: relayer, to: request.to, data: request.data });
    } catch (cause) {
      // The node's error quotes the calldata, which may carry a signed authorization: keep only
      // a summary, never the error itself, so no log line or reply can carry it.
      throw new DomainError('chain.transaction_failed', `the transaction would revert (${errorSummary(cause)})`);
    }
    const journaled = await journal.journal(
      { network, relayer, intent: request.intent, authorizationNonce: request.authorizationNonce },
      clock(),
      async (nonce) => {
        const rawTx = await account.signTransaction({
          chainId, type: 'eip1559', nonce, to: request.to ?? null, data: request.data, value: 0n,
          gas: (gas * 12n) / 10n,
          maxFeePerGas: fees.maxFeePerGas * 2n,
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
        });
        return { rawTx, txHash: keccak256(rawTx) };
      },
    );
    if (journaled === 'released') {
      throw new DomainError('chain.transaction_failed', 'the transfer authorization was released before it was sent');
    }
    await broadcast(network, journaled.rawTx as Hex);
    return finish(network, journaled.id, journaled.txHash as Hex);
  }

  return {
    address: relayer,
    submit,

    async send(network, request) {
      const result = await submit(network, request);
      if (result.status === 'failed') {
        throw new DomainError('chain.transaction_failed', 'the transaction was reverted on chain', { details: result.txHash });
      }
      return result;
    },

    async recover(network) {
      // A node that lost blocks (an anvil killed between two state dumps, a reorg) no longer holds
      // transactions we recorded as mined: every journaled one at or above the relayer's nonce on
      // chain is sent again, in nonce order, from its journaled bytes (same hash), so none is lost
      // and no later transaction waits behind a gap.
      const chainNonce = await chains[network].client.getTransactionCount({ address: relayer, blockTag: 'latest' });
      const lost = await journal.reopenFrom(network, relayer, chainNonce, clock());
      if (lost > 0) logger.error({ network, lost, chainNonce }, 'the chain lost transactions recorded as mined; sending them again');
      const pending = await journal.listUnmined(network, relayer);
      for (const tx of pending) await broadcast(network, tx.rawTx as Hex);
      const results = await Promise.all(pending.map((tx) => finish(network, tx.id, tx.txHash as Hex)));
      synced.delete(network);
      await syncNonce(network);
      const finished = results.filter((r) => r.status !== 'signed').length;
      if (pending.length > 0) logger.info({ network, pending: pending.length, finished }, 'recovered journaled transactions');
      return finished;
    },
  };
}
