/**
 * The port through which the relayer keeps its records; the store implements it
 * (src/store/chain-journal-repository.ts). No SQL and no database transaction leave the store.
 */

/** A journaled transaction: signed (not known to be mined), or mined and confirmed or reverted. */
export type ChainTxStatus = 'signed' | 'confirmed' | 'failed';

/** What a relayed transaction is for; journaled beside it. */
export interface JournalIntent {
  kind: string;
  reference?: string | undefined;
  fromAddress?: string | undefined;
  toAddress?: string | undefined;
  contractAddress?: string | undefined;
  amount?: string | undefined;
}

export interface JournalEntry {
  network: string;
  relayer: string;
  intent: JournalIntent;
  /**
   * The transfer authorizations this transaction carries (a settlement batch): those still
   * `reserved` are marked `submitted`, with the transaction's hash, in the same database transaction
   * that journals it; the others are left out of it.
   */
  authorizationNonces?: readonly string[] | undefined;
}

/** A transaction as signed for the authorizations it carries (all of them when the entry names none). */
export type SignTransaction = (nonce: number, included: readonly string[]) => Promise<{ rawTx: string; txHash: string }>;

export interface UnminedTransaction {
  id: string;
  txHash: string;
  rawTx: string;
  nonce: number;
  createdAt: number;
}

/**
 * The relayer's records: its nonce per network, the journal of every signed transaction (written
 * before it is broadcast), and the platform's contract deployments.
 */
export interface ChainJournal {
  /** Raises the stored next nonce to `chainNonce` when the chain is ahead (first use, another sender). */
  syncNonce(network: string, relayer: string, chainNonce: number): Promise<void>;
  /**
   * In one database transaction: marks the entry's still-reserved authorizations submitted, takes
   * the next nonce, has `sign` sign the transaction with it for those authorizations, and journals the
   * signed bytes beside them. Answers `released` (nothing journaled, nothing to broadcast) when the
   * entry names authorizations and none is reserved any more.
   */
  journal(entry: JournalEntry, now: number, sign: SignTransaction):
    Promise<{ id: string; rawTx: string; txHash: string; included: readonly string[] } | 'released'>;
  markMined(id: string, status: Exclude<ChainTxStatus, 'signed'>, blockNumber: number, now: number): Promise<void>;
  /** A transaction whose nonce another transaction used: it can never be mined; `failed`, never sent again. */
  markReplaced(id: string, now: number): Promise<void>;
  /** Journaled transactions of a relayer not known to be mined, in nonce order. */
  listUnmined(network: string, relayer: string): Promise<UnminedTransaction[]>;
  /** Marks unmined again every transaction at or above the chain's nonce (the node lost them); answers how many. */
  reopenFrom(network: string, relayer: string, chainNonce: number, now: number): Promise<number>;
  /** The latest confirmed deployment transaction journaled under `reference`. */
  findConfirmedDeployment(network: string, reference: string): Promise<string | undefined>;
  findDeployment(network: string, name: string): Promise<{ chainId: number; address: string } | undefined>;
  recordDeployment(deployment: { network: string; name: string; chainId: number; address: string; txHash: string }, now: number): Promise<void>;
}
