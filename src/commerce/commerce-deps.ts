import type { NetworkName } from '#shared/networks.ts';
import type { Clock } from '#shared/clock.ts';
import type { Logger } from '#shared/logger.ts';
import type { Faults } from '#shared/failpoints.ts';
import type { SettlementTokenRepository } from '../store/settlement-token-repository.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';

/**
 * What payments and rewards both stand on: the settlement token, the POS's tran_no keys, quotes in
 * the store's currency and the platform's dates. Each operation takes the narrowest part of it.
 */
export interface CommerceDeps {
  /** Tokens besides VIXP that may settle payments, refunds and rewards (operator allow-list). */
  settlementTokens: Pick<SettlementTokenRepository, 'find' | 'findBySymbol'>;
  /** tran_no keys of the POS's unary calls (CancelPayment, IssueReward, CancelReward). */
  idempotency: IdempotencyRepository;
  clock: Clock;
  logger: Logger;
  /** The network whose tokens payments and rewards move. */
  network: NetworkName;
  timeZone: string;
  defaultCurrency: string;
  pairingWindowMs: number;
  /** STALE_OPERATION_SECONDS: see TranNoDeps. */
  staleOperationMs: number;
  /** The fault suite's failpoints (src/shared/failpoints.ts); none unless a test arms them. */
  faults?: Faults;
}
