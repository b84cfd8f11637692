import type { Generated } from 'kysely';
import type { ChainTxStatus } from '../chain/chain-journal.ts';

/** Table types. Each domain's migration adds its tables here too. */
export interface Database {
  accounts: AccountsTable;
  temp_keys: TempKeysTable;
  relayer_nonces: RelayerNoncesTable;
  chain_txs: ChainTxsTable;
  chain_tx_versions: ChainTxVersionsTable;
  authorizations: AuthorizationsTable;
  deployments: DeploymentsTable;
  tokens: TokensTable;
  users: UsersTable;
  website_logins: WebsiteLoginsTable;
  did_keys: DidKeysTable;
  did_private_keys: DidPrivateKeysTable;
  dids: DidsTable;
  used_presentations: UsedPresentationsTable;
  stores: StoresTable;
  rate_notices: RateNoticesTable;
  number_sequences: NumberSequencesTable;
  payments: PaymentsTable;
  payment_cancellations: PaymentCancellationsTable;
  rewards: RewardsTable;
  settlement_tokens: SettlementTokensTable;
  idempotency_keys: IdempotencyKeysTable;
  receipts: ReceiptsTable;
  operators: OperatorsTable;
  operator_sessions: OperatorSessionsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  fleet: FleetTable;
  jwt_signing_keys: JwtSigningKeysTable;
  statement_days: StatementDaysTable;
  facilitator_keys: FacilitatorKeysTable;
  x402_settlements: X402SettlementsTable;
  x402_settle_answers: X402SettleAnswersTable;
  ipfs_blocks: IpfsBlocksTable;
  ipfs_pins: IpfsPinsTable;
}

export interface AccountsTable {
  address: string;
  private_key_enc: string;
  secret_key_enc: string;
  created_at: number;
}

export interface TempKeysTable {
  key_hash: string;
  address: string;
  key_type: string;
  expires_at: number;
  used_at: number | null;
  created_at: number;
}

export interface RelayerNoncesTable {
  network: string;
  address: string;
  next_nonce: number;
}

export type { ChainTxStatus };

export interface ChainTxsTable {
  id: string;
  network: string;
  kind: string;
  reference: string | null;
  relayer: string;
  nonce: number;
  raw_tx: string;
  tx_hash: string;
  from_address: string | null;
  to_address: string | null;
  contract_address: string | null;
  amount: string | null;
  status: ChainTxStatus;
  block_number: number | null;
  /** Migration 0014: the block's timestamp (seconds) and the transaction's index in it, once mined. */
  block_timestamp: number | null;
  tx_index: number | null;
  /** Migration 0016: the gas the receipt says it used, and the fee paid in wei (decimal string). */
  gas_used: number | null;
  fee_wei: string | null;
  /** Migration 0025: OP stack, the receipt's L1 data fee (`l1Fee`) and the operator fee, in wei (decimal strings); NULL elsewhere. */
  l1_fee_wei: string | null;
  operator_fee_wei: string | null;
  error: string | null;
  created_at: number;
  updated_at: number;
}

/** Migration 0012: the signed versions a re-priced transaction superseded (any may still be mined). */
export interface ChainTxVersionsTable {
  tx_hash: string;
  chain_tx_id: string;
  raw_tx: string;
  created_at: number;
}

/** Where an EIP-3009 authorization stands: `reserved` and `submitted` hold the account's funds. */
export type AuthorizationStatus = 'reserved' | 'submitted' | 'used' | 'canceled' | 'expired' | 'void';

export interface AuthorizationsTable {
  nonce: string;
  network: string;
  reference: string;
  contract_address: string;
  from_address: string;
  to_address: string;
  value: string;
  valid_before: number;
  from_block: number;
  status: AuthorizationStatus;
  tx_hash: string | null;
  cancel_tx_hash: string | null;
  created_at: number;
  updated_at: number;
  /** Migration 0022: the EIP-3009 nonce when `nonce` is an outside payer's row key (authorizationKey); null when it is the nonce. */
  chain_nonce: string | null;
}

export interface DeploymentsTable {
  network: string;
  name: string;
  chain_id: number;
  address: string;
  tx_hash: string;
  created_at: number;
}

export interface TokensTable {
  network: string;
  contract_address: string;
  symbol: string;
  name: string;
  decimals: number;
  owner: string;
  created_at: number;
}

export interface UsersTable {
  id: string;
  password_hash: string;
  name: string;
  tel_no: string | null;
  email: string | null;
  wallet_address: string | null;
  did: string | null;
  created_at: number;
}

export interface WebsiteLoginsTable {
  request_id_hash: string;
  site: string;
  requester_ip: string | null;
  expires_at: number;
  user_id: string | null;
  completed_at: number | null;
  consumed_at: number | null;
  cancelled_at: number | null;
  created_at: number;
}

export interface DidKeysTable {
  kid: string;
  kms: string;
  type: string;
  public_key_hex: string;
  meta_json: string | null;
  created_at: number;
}

export interface DidPrivateKeysTable {
  alias: string;
  type: string;
  private_key_enc: string;
  created_at: number;
}

export interface DidsTable {
  did: string;
  provider: string;
  alias: string | null;
  controller_key_id: string | null;
  key_ids_json: string;
  services_json: string;
  role: string | null;
  created_at: number;
}

export interface UsedPresentationsTable {
  jwt_hash: string;
  holder_did: string;
  expires_at: number;
  used_at: number;
}

export interface StoresTable {
  tid: string;
  name: string;
  settlement_address: string;
  api_key_hash: string;
  created_at: number;
}

export interface RateNoticesTable {
  currency: string;
  /** yyyyMMdd in the platform's time zone. */
  notice_date: string;
  notice_index: number;
  rate: string;
  published_at: number;
  /** The token priced: '' and '' for the platform token (VIXP), else an allowed token's network and checksummed contract. */
  network: string;
  contract_address: string;
}

export interface NumberSequencesTable {
  name: string;
  next_value: number;
}

export type PaymentStatus = 'pending' | 'approved' | 'failed';

export interface PaymentsTable {
  id: string;
  tid: string;
  tran_no: string;
  status: PaymentStatus;
  user_uuid: string;
  user_address: string | null;
  settlement_address: string;
  network: string;
  contract_address: string | null;
  token_symbol: string | null;
  /** Base units. */
  token_amount: string | null;
  exchange_amount: string;
  exchange_currency: string;
  exchange_rate: string | null;
  exchange_date_index: string | null;
  transfer_transaction_id: string | null;
  approval_no: string | null;
  approval_date: string | null;
  /** Base units refunded (or being refunded) by cancellations so far. */
  refunded_amount: string;
  failure_code: string | null;
  created_at: number;
  updated_at: number;
  /** Migration 0011: the instance running the attempt (its Redis pairing desk's id); null in-process. */
  run_by: string | null;
}

export type PaymentCancellationStatus = 'pending' | 'done' | 'failed';

export interface PaymentCancellationsTable {
  id: string;
  payment_id: string;
  status: PaymentCancellationStatus;
  token_amount: string;
  exchange_amount: string | null;
  transfer_transaction_id: string | null;
  cancel_no: string | null;
  cancel_date: string | null;
  created_at: number;
  updated_at: number;
}

export type RewardStatus = 'issued' | 'claiming' | 'claimed' | 'canceling' | 'canceled';

export interface RewardsTable {
  id: string;
  tid: string;
  reward_reason: string;
  status: RewardStatus;
  network: string;
  settlement_address: string;
  contract_address: string;
  token_symbol: string;
  token_amount: string;
  exchange_amount: string;
  exchange_currency: string;
  exchange_rate: string;
  exchange_date_index: string;
  reward_date: string;
  expires_at: number;
  user_address: string | null;
  claim_transaction_id: string | null;
  claimed_at: number | null;
  cancel_no: string | null;
  cancel_date: string | null;
  cancel_transaction_id: string | null;
  created_at: number;
  updated_at: number;
}

/** Operator allow-list: tokens besides a network's VIXP that settle payments, refunds and rewards. */
export interface SettlementTokensTable {
  network: string;
  contract_address: string;
  symbol: string;
  allowed_at: number;
  /** Its EIP-712 domain's name when it has EIP-3009, else its `name()`. */
  name: string;
  decimals: number;
  /** The version of its EIP-3009 domain (EIP-712); NULL: no EIP-3009. */
  eip712_version: string | null;
  /** How custodial accounts move it: `eip3009`, or `account` (the account contract through EIP-7702). */
  transfer_path: string;
}

/** Where an idempotency key stands: its operation runs, awaits the chain, or has its final outcome. */
export type IdempotencyKeyState = 'running' | 'pending' | 'done';

export interface IdempotencyKeysTable {
  scope: string;
  idem_key: string;
  fingerprint: string;
  state: IdempotencyKeyState;
  reference: string | null;
  outcome: string | null;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

/** A store's webhook endpoint (migration 0009). `tid` null: every store's events (`vixpay listen`). */
export interface WebhookEndpointsTable {
  id: string;
  tid: string | null;
  url: string;
  /** Comma-separated event types, or `*`. */
  events: string;
  secret_enc: string;
  /** The secret before the last rotation, still signing until `previous_secret_expires_at`. */
  previous_secret_enc: string | null;
  previous_secret_expires_at: number | null;
  created_at: number;
  /** Migration 0015: 1 when the operator opted the endpoint in to private addresses. */
  allow_private: number;
}

/** The outbox: one row per event, written in the transaction of the state change it reports. */
export interface WebhookEventsTable {
  id: string;
  tid: string;
  type: string;
  data: string;
  created_at: number;
}

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed';

/** One event to one endpoint. `next_attempt_at` is also the lease of the instance attempting it. */
export interface WebhookDeliveriesTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  status: WebhookDeliveryStatus;
  attempts: number;
  next_attempt_at: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** What a receipt is of (migration 0010). */
export type ReceiptKind = 'payment' | 'cancellation' | 'reward_claim' | 'x402';

/** A verifiable credential issued for an approval, cancellation or reward claim, kept once issued. */
export interface ReceiptsTable {
  id: string;
  kind: ReceiptKind;
  source_id: string;
  tid: string;
  reference: string;
  user_address: string;
  transaction_id: string;
  issuer: string;
  credential_jwt: string;
  issued_at: number;
}

/** A console operator (`vixpay operator add`). */
export interface OperatorsTable {
  username: string;
  password_hash: string;
  created_at: number;
}

/** A console login: the SHA-256 of its cookie's token. */
export interface OperatorSessionsTable {
  token_hash: string;
  username: string;
  expires_at: number;
  created_at: number;
}

export type { Generated };

/** Migration 0011: sha256 fingerprints every instance on the database must match (never a secret). */
export interface FleetTable {
  name: string;
  fingerprint: string;
  updated_at: number;
}

/** Migration 0011: access-token signing keys, the private JWK sealed with the master key. */
export interface JwtSigningKeysTable {
  kid: string;
  public_jwk: string;
  private_jwk_enc: string;
  created_at: number;
  retired_at: number | null;
  verify_until: number | null;
}

/** Migration 0019: the (store, day) whose `statement.ready` webhook was written (yyyy-mm-dd, TIME_ZONE). */
export interface StatementDaysTable {
  tid: string;
  statement_date: string;
  created_at: number;
}

/** Migration 0018: a resource server's key to the x402 facilitator (only its SHA-256 is kept). */
export interface FacilitatorKeysTable {
  id: string;
  name: string;
  key_hash: string;
  tid: string | null;
  rate_per_second: number;
  created_at: number;
  revoked_at: number | null;
}

export type X402SettlementStatus = 'accepted' | 'settled' | 'failed';

/** Migration 0018: a payment accepted by POST /x402/settle; keyed by network, token, payer and nonce since 0022. */
export interface X402SettlementsTable {
  /** Migration 0022: `<network>:<token>:<payer>:<nonce>`, lowercase (authorizationKey): also its `authorizations` row's key. */
  id: string;
  /** The EIP-3009 nonce, lowercase 0x-hex. */
  nonce: string;
  network: string;
  payer: string;
  pay_to: string;
  asset: string;
  amount: string;
  /** Migration 0021: the canonical uint256 decimal as signed (was bigint, which cannot hold every uint256). */
  /** The signed validAfter, canonical uint256 decimal (migration 0023; '0' on rows accepted before). */
  valid_after: string;
  valid_before: string;
  signature: string;
  key_id: string;
  status: X402SettlementStatus;
  tx_hash: string | null;
  error_reason: string | null;
  created_at: number;
  updated_at: number;
}

/** Migration 0024: an x402 settlement a settle answered settled (src/x402/repeated-payment.ts). */
export interface X402SettleAnswersTable {
  settlement_id: string;
  key_id: string;
  answered_at: number;
}

/** IPFS blocks of the fleet (IPFS_BLOCKSTORE=postgres), keyed by multihash; written once. */
export interface IpfsBlocksTable {
  multihash: Uint8Array;
  bytes: Uint8Array;
  created_at: number;
}

/** Roots pinned by an add, written once the add is complete. */
export interface IpfsPinsTable {
  cid: string;
  pinned_at: number;
}
