import type { DomainError } from '#shared/errors.ts';

/** What the app's REQUEST_TRANSFER carries: the exact transfer it is asked to sign. */
export interface TransferRequest {
  tranNo: string;
  contractAddress: string;
  tokenSymbol: string;
  /** Decimal token amount; the app signs exactly this string. */
  tokenAmount: string;
  settlementAddress: string;
  storeName: string;
  transferComment: string;
  exchangeDateIndex: string;
  exchangeRate: string;
  exchangeAmount: string;
  exchangeCurrency: string;
}

/** An approved payment: END_PAY's fields (approval_no and approval_date go to the POS only). */
export interface PaymentApproval {
  tranNo: string;
  contractAddress: string;
  tokenSymbol: string;
  userAddress: string;
  tokenAmount: string;
  transferTransactionId: string;
  approvalNo: string;
  approvalDate: string;
  exchangeDateIndex: string;
  exchangeRate: string;
  exchangeAmount: string;
  exchangeCurrency: string;
}

/** A claimed reward: END_REWARD's fields, to the POS and the app alike. */
export interface RewardClaim {
  rewardId: string;
  contractAddress: string;
  tokenSymbol: string;
  userAddress: string;
  tokenAmount: string;
  transferTransactionId: string;
  exchangeDateIndex: string;
  exchangeRate: string;
  exchangeAmount: string;
  exchangeCurrency: string;
}

/** The app's TRANSFER: docs/interfaces.md#grpc-payments's transfer_key (temp key), hash_key and transfer_signature. */
export interface TransferCredentials {
  tempKey: string;
  hashKey: string;
  signature: string;
  comment: string;
}

/** What the server tells a stream. `end_pay`, `end_reward` and `failed` end the stream. */
export type SessionEvent =
  | { type: 'request_transfer'; request: TransferRequest }
  /** The POS's REQUEST_TRANSFER: the user is preparing the transfer. */
  | { type: 'transfer_pending'; tranNo: string }
  | { type: 'end_pay'; approval: PaymentApproval }
  | { type: 'end_reward'; claim: RewardClaim }
  /** `flow` says which terminal state the failure ends (END_PAY unless a reward claim). */
  | { type: 'failed'; error: DomainError; flow?: 'payment' | 'reward'; tranNo?: string };

/** One side of a session, as the domain sees it; the transport turns events into PayData. */
export interface SessionSink {
  send(event: SessionEvent): void;
}

/** The POS's side of a streamed call: where its events go, and a signal that aborts when its stream ends or is cancelled. */
export interface PosSide extends SessionSink {
  signal: AbortSignal;
}
