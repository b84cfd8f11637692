import type { WalletService } from '../wallet/wallet-service.ts';
import type { MerchantRepository } from '../store/merchant-repository.ts';
import type { PaymentRepository } from '../store/payment-repository.ts';
import type { PairingDesk } from '../pairing/pairing-desk.ts';
import type { CommerceDeps } from '../commerce/commerce-deps.ts';

/** What the payment operations need; each takes the narrowest part of it. */
export interface PaymentDeps extends CommerceDeps {
  merchants: MerchantRepository;
  payments: PaymentRepository;
  wallet: Pick<WalletService, 'createAddress' | 'transfer' | 'transferFromCustody' | 'transferOutcome' | 'getBalance' | 'getTokenInfo'>;
  desk: PairingDesk;
  idleTimeoutMs: number;
}
