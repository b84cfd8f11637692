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
  /** When its current bytes were signed: journaled, or last re-priced (or reopened). */
  signedAt: number;
  /** The earlier versions it superseded by re-pricing (same nonce): any of them may still be the one mined. */
  supersededHashes: string[];
  /**
   * An authorization it carries is recorded used in its current version (seen executed on chain
   * before its receipt was recorded): that hash was answered, so it is sent again as it is, and
   * re-priced only when it cannot be mined at today's fees.
   */
  seenExecuted: boolean;
}

/** An account transfer's `authorizations` row as recovery reads it (`ChainJournal.accountTransfersOf`). */
export interface SubmittedAccountTransfer {
  key: string;
  token: string;
  from: string;
  nonce: string;
}

/** Where a transaction was mined. */
export interface MinedPosition {
  blockNumber: number;
  /** The block's timestamp in seconds, from the block's header. */
  blockTimestamp?: number | undefined;
  /** Its index in the block. */
  txIndex?: number | undefined;
  /** What it cost, from its receipt: gas used, and the fee paid in wei (gas used × effective gas price). */
  gasUsed?: number | undefined;
  feeWei?: bigint | undefined;
  /** OP stack: the L1 data fee its receipt states (`l1Fee`) and the operator fee, in wei; undefined elsewhere. */
  l1FeeWei?: bigint | undefined;
  operatorFeeWei?: bigint | undefined;
}

/** A transaction recorded mined whose block the node no longer has (a managed anvil's crash). */
export interface LostTransaction extends MinedPosition {
  id: string;
  relayer: string;
  nonce: number;
  txHash: string;
  rawTx: string;
  status: Exclude<ChainTxStatus, 'signed'>;
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
  /**
   * Records the transaction mined. `txHash` names the version mined when it is a superseded one (a
   * re-priced transaction's earlier version): the row then holds that version's hash and bytes, and
   * its authorizations that hash.
   */
  markMined(id: string, status: Exclude<ChainTxStatus, 'signed'>, position: MinedPosition, now: number, txHash?: string): Promise<void>;
  /**
   * Records the authorizations the transaction `txHash` carried as its receipt shows them: those
   * among `nonces` (its receipt executed them) used, when submitted; any other one recorded used
   * with it back to submitted. A transaction sent again by recovery has no caller waiting to record
   * them, and one sent again after the chain lost its block may execute less than the lost version:
   * a use recorded from that version (a caller's late write) is the wallet sweep's to end as the
   * chain says.
   */
  markAuthorizationsUsed(txHash: string, nonces: readonly string[], now: number): Promise<void>;
  /**
   * The account transfers (docs/decisions/tokens.md, a token without EIP-3009) `submitted` or `used`
   * with the transaction `txHash`: each row's key, token, account and account nonce (bytes32 hex,
   * lowercase). Recovery records them as the transaction's receipt executed them.
   */
  accountTransfersOf(txHash: string): Promise<SubmittedAccountTransfer[]>;
  /**
   * Journals a re-priced version of an unmined transaction (same nonce, higher fees) before it is
   * broadcast: the row holds the new bytes (what recovery sends), the superseded version is kept,
   * and its authorizations name the new hash, submitted (one recorded used in the superseded version
   * too: the receipt of the version mined decides). False (nothing changed) when the row is no
   * longer unmined at `previousTxHash` (mined, or re-priced by another instance meanwhile).
   */
  replace(id: string, previousTxHash: string, next: { rawTx: string; txHash: string }, now: number): Promise<boolean>;
  /** Every hash the transaction was signed with: the current version first, then those it superseded. */
  hashesOf(id: string): Promise<string[]>;
  /** A transaction whose nonce another transaction used: it can never be mined; `failed`, never sent again. */
  markReplaced(id: string, now: number): Promise<void>;
  /** Journaled transactions of a relayer not known to be mined, in nonce order. */
  listUnmined(network: string, relayer: string): Promise<UnminedTransaction[]>;
  /**
   * The transactions recorded mined at or above each lane's nonce on chain (the node lost their
   * blocks), in the order they were mined: block, then index in the block.
   */
  listLost(network: string, chainNonces: ReadonlyMap<string, number>): Promise<LostTransaction[]>;
  /**
   * Marks unmined again every transaction at or above the chain's nonce (the node lost them), and the
   * authorizations they carried that were recorded used submitted again (the chain no longer holds
   * their use); answers how many transactions.
   */
  reopenFrom(network: string, relayer: string, chainNonce: number, now: number): Promise<number>;
  /**
   * The highest nonce of a lane's transactions recorded mined since `since` (ms), if any: what a node
   * that lost recent blocks would no longer count.
   */
  lastMinedNonce(network: string, relayer: string, since: number): Promise<number | undefined>;
  /** The latest transaction of this `kind` journaled under `reference`, whatever its status (signed, confirmed, failed). */
  findLatest(network: string, kind: string, reference: string): Promise<{ txHash: string; status: ChainTxStatus } | undefined>;
  /** The latest confirmed deployment transaction journaled under `reference`. */
  findConfirmedDeployment(network: string, reference: string): Promise<string | undefined>;
  findDeployment(network: string, name: string): Promise<{ chainId: number; address: string } | undefined>;
  recordDeployment(deployment: { network: string; name: string; chainId: number; address: string; txHash: string }, now: number): Promise<void>;
}
