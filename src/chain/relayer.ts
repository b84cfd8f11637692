import { randomUUID } from 'node:crypto';
import { keccak256, type Address, type Hex, type PrivateKeyAccount, type TransactionReceipt } from 'viem';
import type { Transaction } from 'kysely';
import type { Db } from '../store/db.ts';
import type { Database, ChainTxStatus } from '../store/schema.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { DomainError } from '../shared/errors.ts';
import { errorSummary } from '../shared/redact.ts';
import type { ChainClients } from './chain-clients.ts';
import type { NetworkName } from './networks.ts';

/** What a relayed transaction is for; journaled beside it. */
export interface RelayIntent {
  kind: 'transfer' | 'deploy' | 'mint' | (string & {});
  reference?: string;
  fromAddress?: string;
  toAddress?: string;
  contractAddress?: string;
  amount?: string;
}

export interface RelayRequest {
  /** Omitted for a contract deployment. */
  to?: Address;
  data: Hex;
  intent: RelayIntent;
  /**
   * Runs inside the database transaction that allocates the nonce and journals the signed
   * transaction, after the journal row is written, so that (for example) marking an authorization
   * submitted and journaling commit together. Throwing here sends nothing.
   */
  withinJournal?: (trx: Transaction<Database>, journaled: { txHash: Hex }) => Promise<void>;
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
   * Throws (`chain.transaction_failed` when the node says it would revert, `chain.unavailable`)
   * only when nothing was journaled, so nothing was sent; once journaled, answers the outcome.
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
  db: Db;
  chains: ChainClients;
  account: PrivateKeyAccount;
  clock: Clock;
  logger: Logger;
  receiptTimeoutMs?: number;
}

export function createRelayer(deps: RelayerDeps): Relayer {
  const { db, chains, account, clock, logger } = deps;
  const receiptTimeoutMs = deps.receiptTimeoutMs ?? 60_000;
  const relayer = account.address;
  const synced = new Set<NetworkName>();

  /** The stored next nonce never trails the chain's pending nonce (first use, or another sender). */
  async function syncNonce(network: NetworkName): Promise<void> {
    if (synced.has(network)) return;
    const onChain = await chains[network].client.getTransactionCount({ address: relayer, blockTag: 'pending' });
    await db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('relayer_nonces').select('next_nonce')
        .where('network', '=', network).where('address', '=', relayer).executeTakeFirst();
      if (!row) {
        await trx.insertInto('relayer_nonces').values({ network, address: relayer, next_nonce: onChain }).execute();
      } else if (row.next_nonce < onChain) {
        await trx.updateTable('relayer_nonces').set({ next_nonce: onChain })
          .where('network', '=', network).where('address', '=', relayer).execute();
      }
    });
    synced.add(network);
  }

  async function finish(network: NetworkName, id: string, txHash: Hex): Promise<RelayResult> {
    const { client } = chains[network];
    let receipt: TransactionReceipt;
    try {
      receipt = await client.waitForTransactionReceipt({ hash: txHash, timeout: receiptTimeoutMs });
    } catch (cause) {
      logger.warn({ network, txHash, reason: errorSummary(cause) }, 'no receipt yet; left for recovery');
      return { txHash, status: 'signed' };
    }
    const status: ChainTxStatus = receipt.status === 'success' ? 'confirmed' : 'failed';
    await db.updateTable('chain_txs')
      .set({ status, block_number: Number(receipt.blockNumber), updated_at: clock(), error: status === 'failed' ? 'reverted' : null })
      .where('id', '=', id).execute();
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
    const id = randomUUID();
    const now = clock();
    const { rawTx, txHash } = await db.transaction().execute(async (trx) => {
      const row = await trx.updateTable('relayer_nonces')
        .set((eb) => ({ next_nonce: eb('next_nonce', '+', 1) }))
        .where('network', '=', network).where('address', '=', relayer)
        .returning('next_nonce').executeTakeFirstOrThrow();
      const nonce = Number(row.next_nonce) - 1;
      const signed = await account.signTransaction({
        chainId, type: 'eip1559', nonce, to: request.to ?? null, data: request.data, value: 0n,
        gas: (gas * 12n) / 10n,
        maxFeePerGas: fees.maxFeePerGas * 2n,
        maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
      });
      const hash = keccak256(signed);
      const { intent } = request;
      await trx.insertInto('chain_txs').values({
        id, network, kind: intent.kind, reference: intent.reference ?? null, relayer, nonce, raw_tx: signed,
        tx_hash: hash, from_address: intent.fromAddress ?? null, to_address: intent.toAddress ?? null,
        contract_address: intent.contractAddress ?? null, amount: intent.amount ?? null,
        status: 'signed', block_number: null, error: null, created_at: now, updated_at: now,
      }).execute();
      await request.withinJournal?.(trx, { txHash: hash });
      return { rawTx: signed, txHash: hash };
    });
    await broadcast(network, rawTx);
    return finish(network, id, txHash);
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
      const lost = await db.updateTable('chain_txs').set({ status: 'signed', block_number: null, error: null, updated_at: clock() })
        .where('network', '=', network).where('relayer', '=', relayer).where('status', '!=', 'signed').where('nonce', '>=', chainNonce)
        .executeTakeFirst();
      if (Number(lost.numUpdatedRows) > 0) {
        logger.error({ network, lost: Number(lost.numUpdatedRows), chainNonce }, 'the chain lost transactions recorded as mined; sending them again');
      }
      const pending = await db.selectFrom('chain_txs').select(['id', 'tx_hash', 'raw_tx', 'nonce'])
        .where('network', '=', network).where('relayer', '=', relayer).where('status', '=', 'signed')
        .orderBy('nonce').execute();
      for (const tx of pending) await broadcast(network, tx.raw_tx as Hex);
      const results = await Promise.all(pending.map((tx) => finish(network, tx.id, tx.tx_hash as Hex)));
      synced.delete(network);
      await syncNonce(network);
      const finished = results.filter((r) => r.status !== 'signed').length;
      if (pending.length > 0) logger.info({ network, pending: pending.length, finished }, 'recovered journaled transactions');
      return finished;
    },
  };
}
