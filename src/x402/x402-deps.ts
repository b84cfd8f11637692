import type { Address } from 'viem';
import type { Clock } from '#shared/clock.ts';
import type { Faults } from '#shared/failpoints.ts';
import type { Logger } from '#shared/logger.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { ChainJournal } from '../chain/chain-journal.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { AuthorizationRepository } from '../store/authorization-repository.ts';
import type { SettlementTokenRepository } from '../store/settlement-token-repository.ts';
import type { X402SettlementRepository } from '../store/x402-settlement-repository.ts';
import type { FacilitatorKeyRepository } from '../store/facilitator-key-repository.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';
import type { X402SettleAnswerRepository } from '../store/x402-settle-answer-repository.ts';

/** How a settlement ended, for the metrics: `pending` answers are counted when they end. */
export type X402Outcome = 'settled' | 'failed';

/**
 * The receipts of x402 payments (docs/receipts.md, kind `x402`): issued when a settlement is recorded
 * settled, kept once issued; reads never issue one.
 */
export interface X402Receipts {
  /** Issues the receipt of the settlement with this id (X402SettlementRecord.id) if it is settled and has none yet. */
  issue(id: string): Promise<void>;
  /** Nonces of settlements accepted since `since` (epoch ms), settled, without a receipt: oldest first, at most `limit`. */
  missing(since: number, limit: number): Promise<string[]>;
  /** The receipt issued for the settlement with this id, undefined while it has none. */
  find(id: string): Promise<Record<string, unknown> | undefined>;
}

/** What the facilitator operations need; each takes the narrowest part of it. */
export interface X402Deps {
  chains: ChainClients;
  contracts: PlatformContractsByNetwork;
  relayer: Relayer;
  authorizations: AuthorizationRepository;
  settlements: X402SettlementRepository;
  keys: FacilitatorKeyRepository;
  /** The operator's allow-list: its EIP-3009 tokens are accepted beside VIXP. */
  settlementTokens: Pick<SettlementTokenRepository, 'find' | 'list'>;
  clock: Clock;
  logger: Logger;
  /** Receipts issued at settlement; without them (a test's sweeper) none is issued. */
  receipts?: X402Receipts;
  /** Told once per settlement that ends (the metrics). */
  onOutcome?: (network: NetworkName, outcome: X402Outcome) => void;
  /**
   * ERC-6492 payers (deploy-wallet.ts): the factories the operator allow-lists (`X402_EIP6492_FACTORIES`)
   * and the relayer's journal, where a wallet's deployment is looked up; without them no wallet is deployed.
   */
  walletDeployments?: { factories: readonly Address[]; journal: Pick<ChainJournal, 'findLatest'> };
  /**
   * How far ahead of the clock (seconds) a validAfter may lie to be accepted and held
   * (`X402_MAX_HOLD_SECONDS`); default `defaultMaxHoldSeconds` (valid-window.ts).
   */
  maxHoldSeconds?: bigint;
  /**
   * The HSM token when KEY_CUSTODY=pkcs11: probed before a settlement is accepted and while one not
   * sent yet is waited on, so that a settle answers 503 (`custody.unavailable`) while it is down.
   */
  custody?: { probe(): Promise<void> };
  /** The fault suite's failpoints (src/shared/failpoints.ts); none unless a test arms them. */
  faults?: Faults;
  /** The payment-identifier extension's ids (payment-identifier.ts); without them the extension is not offered. */
  paymentIds?: IdempotencyRepository;
  /** The settlements answered settled (repeated-payment.ts); without them a payment answered pending cannot be presented again. */
  answers?: X402SettleAnswerRepository;
}
