import type { Address, Hex, SignedAuthorization, TransactionReceipt } from 'viem';
import type { ChainTxStatus, JournalIntent } from './chain-journal.ts';

/** What a relayed transaction is for; journaled beside it. */
export type RelayIntent = JournalIntent & { kind: 'settlement' | 'deploy' | 'mint' | 'cancel-authorization' | (string & {}) };

export interface RelayRequest {
  /** Omitted for a contract deployment. */
  to?: Address;
  data: Hex;
  /** Native coin sent with it, in wei (a lane's funding); none otherwise. */
  value?: bigint;
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
  /** When it becomes valid (Unix seconds, the token checks `block.timestamp > validAfter`); 0 when omitted (the platform's own authorizations). */
  validAfter?: bigint;
  validBefore: bigint;
  nonce: Hex;
  /**
   * The holder's signature of TransferWithAuthorization: a plain account's packed `r || s || v`, or
   * (with `alone`) whatever its contract account's ERC-1271 `isValidSignature` takes.
   */
  signature: Hex;
  /**
   * A contract account's signature (src/x402/contract-signature.ts): sent alone, as the token's
   * `transferWithAuthorization(…, bytes signature)`, never in a batch (docs/decisions/x402.md#smart-wallet-payers-issue-30).
   */
  alone?: boolean;
  /** Its `authorizations` row when that is not `nonce` (an outside payer's: `authorizationKey`, mined-receipt.ts). */
  key?: string;
  /**
   * An account transfer (src/chain/account-settlement.ts), not an EIP-3009 authorization: `from` is a
   * custodial account delegated (EIP-7702) to VixpayAccount, `nonce` its account nonce (bytes32),
   * `validBefore` its deadline (the last second it executes in), `signature` the account key's of the
   * EIP-712 `Transfer`; settled through VixpAccountSettlement. `delegation`: the account's signed
   * EIP-7702 authorization when its code is not that delegation yet, carried in the transaction.
   */
  account?: { delegation?: SignedAuthorization | undefined };
}

/** What a mined transaction of the relayer cost, from its receipt. */
export interface MinedCost {
  blockNumber: bigint;
  gasUsed: bigint;
  /** Gas used × effective gas price (execution), in wei. */
  feeWei: bigint;
  /** OP stack: the L1 data fee and the operator fee, in wei (0 elsewhere). The transaction cost the three together. */
  l1FeeWei: bigint;
  operatorFeeWei: bigint;
  /** The transfer authorizations it executed (0 for a deployment, a mint or a cancellation). */
  transfers: number;
}
