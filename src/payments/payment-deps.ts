import type { NetworkName } from '../shared/networks.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import type { PaymentRepository } from '../store/payment-repository.ts';
import type { SettlementTokenRepository } from '../store/settlement-token-repository.ts';
import type { PairingDesk } from '../pairing/pairing-desk.ts';
import type { IdempotencyRepository } from '../store/idempotency-repository.ts';
import type { Faults } from '../shared/failpoints.ts';

/** What the payment operations need; each takes the narrowest part of it. */
export interface PaymentDeps {
  merchants: MerchantRepository;
  payments: PaymentRepository;
  /** Tokens besides VIXP that may settle payments, refunds and rewards (operator allow-list). */
  settlementTokens: Pick<SettlementTokenRepository, 'find' | 'findBySymbol'>;
  wallet: Pick<WalletService, 'createAddress' | 'transfer' | 'transferFromCustody' | 'transferOutcome' | 'getBalance' | 'getTokenInfo'>;
  desk: PairingDesk;
  /** tran_no keys of the POS's unary calls (CancelPayment, IssueReward, CancelReward). */
  idempotency: IdempotencyRepository;
  clock: Clock;
  logger: Logger;
  /** The network whose tokens payments move. */
  network: NetworkName;
  timeZone: string;
  defaultCurrency: string;
  pairingWindowMs: number;
  idleTimeoutMs: number;
  /** STALE_OPERATION_SECONDS: see TranNoDeps. */
  staleOperationMs: number;
  /** The fault suite's failpoints (src/shared/failpoints.ts); none unless a test arms them. */
  faults?: Faults;
}
