import { keccak256, parseTransaction, type Hex, type LocalAccount } from 'viem';
import type { ChainJournal, UnminedTransaction } from './chain-journal.ts';
import type { ChainClient } from './chain-clients.ts';
import type { Logger } from '#shared/logger.ts';
import { replacementFees } from './replacement-fees.ts';

export interface RepriceStaleParameters {
  journal: Pick<ChainJournal, 'replace'>;
  chain: Pick<ChainClient, 'network' | 'chainId' | 'client'>;
  /** The lane whose stale transactions these are. */
  account: LocalAccount;
  /** Re-priced even above the base fee once unmined this long after its signing. */
  afterMs: number;
  /** The highest fee cap (wei) a replacement gets. */
  maxFeePerGas: bigint;
  now: () => number;
  logger: Logger;
  /** Called once a replacement is journaled, before it is broadcast. */
  onRepriced: (tx: UnminedTransaction, previousTxHash: string) => void;
}

/**
 * Re-prices a lane's stale transactions (in place: `pending` then holds the versions to send) that
 * cannot be mined at today's fees (fee cap below the latest block's base fee) or have waited
 * `afterMs` since they were signed (unless seen executed: `UnminedTransaction.seenExecuted`): signed again with the same nonce, to, data, gas and value and
 * higher fees (`replacementFees`), journaled before anything is sent, the old version kept. One whose
 * nonce the chain already used is left alone (its receipt decides). Nothing is re-priced while the
 * node does not answer.
 */
export async function repriceStale(params: RepriceStaleParameters, pending: UnminedTransaction[]): Promise<void> {
  const { chain: { client, network, chainId }, account, logger } = params;
  if (pending.length === 0) return;
  let baseFee: bigint | undefined;
  let chainNonce: number;
  try {
    const [block, nonce] = await Promise.all([client.getBlock({ blockTag: 'latest' }), client.getTransactionCount({ address: account.address, blockTag: 'latest' })]);
    baseFee = block.baseFeePerGas ?? undefined;
    chainNonce = nonce;
  } catch {
    return; // the broadcast and the receipt wait report a node that does not answer
  }
  const lane = account.address;
  for (const tx of pending) {
    if (tx.nonce < chainNonce) continue;
    const parsed = parseTransaction(tx.rawTx as Hex);
    // A type-4 settlement (account transfers carrying delegations) is re-priced with the same delegations.
    if ((parsed.type !== 'eip1559' && parsed.type !== 'eip7702') || parsed.nonce === undefined || parsed.gas === undefined) continue;
    const old = { maxFeePerGas: parsed.maxFeePerGas ?? 0n, maxPriorityFeePerGas: parsed.maxPriorityFeePerGas ?? 0n };
    const underpriced = baseFee !== undefined && old.maxFeePerGas < baseFee;
    // Seen executed (a chain that went back lost it): its hash was answered, so its own bytes are sent.
    if (!underpriced && (tx.seenExecuted || params.now() - tx.signedAt < params.afterMs)) continue;
    let estimate;
    try {
      estimate = await client.estimateFeesPerGas();
    } catch {
      return;
    }
    const fees = replacementFees(old, estimate, params.maxFeePerGas);
    if (!fees) {
      logger.warn({ network, lane, txHash: tx.txHash, maxFeePerGas: old.maxFeePerGas.toString(), baseFee: baseFee?.toString() },
        'a stale transaction is at the fee ceiling (MAX_FEE_PER_GAS_GWEI): not re-priced');
      continue;
    }
    if (fees.capped) {
      logger.warn({ network, lane, txHash: tx.txHash, maxFeePerGas: fees.maxFeePerGas.toString(), baseFee: baseFee?.toString() },
        're-priced fee capped at MAX_FEE_PER_GAS_GWEI');
    }
    const common = {
      chainId, nonce: parsed.nonce, data: parsed.data, value: parsed.value ?? 0n, gas: parsed.gas,
      maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
    };
    const rawTx = parsed.type === 'eip7702'
      ? await account.signTransaction({ ...common, type: 'eip7702', to: parsed.to!, authorizationList: parsed.authorizationList ?? [] })
      : await account.signTransaction({ ...common, type: 'eip1559', to: parsed.to ?? null });
    const txHash = keccak256(rawTx);
    const signedAt = params.now();
    // False when it was mined or re-priced by another instance meanwhile: these bytes are never sent.
    if (!(await params.journal.replace(tx.id, tx.txHash, { rawTx, txHash }, signedAt))) continue;
    const previous = tx.txHash;
    tx.supersededHashes.unshift(previous);
    Object.assign(tx, { rawTx, txHash, signedAt });
    params.onRepriced(tx, previous);
    logger.warn({
      network, lane, nonce: tx.nonce, replaced: previous, txHash, underpriced, baseFee: baseFee?.toString(),
      maxFeePerGas: fees.maxFeePerGas.toString(), maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
    }, 're-priced a stale transaction');
  }
}
