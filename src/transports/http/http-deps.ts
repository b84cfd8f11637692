import type { Config } from '../../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Metrics } from '#shared/metrics.ts';
import type { Readiness } from '#shared/readiness.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { BlockReader } from '../../chain/get-block.ts';
import type { WalletService } from '../../wallet/wallet-service.ts';
import type { IpfsBackend } from '../../ipfs/ipfs-backend.ts';
import type { ReceiptService } from '../../receipts/receipt-service.ts';
import type { PaymentService } from '../../payments/payment-service.ts';
import type { PayService } from '../../pay/idempotent-pay.ts';
import type { TransferStatusDeps } from '../../pay/transfer-status.ts';
import type { UserService } from '../../identity/users.ts';
import type { JwtService } from '../../identity/jwt.ts';
import type { LoginService } from '../../identity/login.ts';
import type { WebsiteLoginService } from '../../identity/website-login.ts';
import type { DidService } from '../../did/did-service.ts';
import type { VerifyLoginPresentation } from '../../did/vp-login.ts';
import type { FindUserIdByHolder } from '../../did/holder-binding.ts';
import type { ConsoleRoutesDeps } from './routes/console.ts';
import type { X402RoutesDeps } from './routes/x402.ts';
import type { StatementService } from '../../statements/statement-service.ts';

/** What the HTTP interfaces stand on: services the composition root built, never built here. */
export interface HttpDeps {
  config: Config;
  logger: Logger;
  /** The networks served (`/healthz`). */
  chains: Record<NetworkName, unknown>;
  identity: { users: UserService; jwt: JwtService; login: LoginService; websiteLogins: WebsiteLoginService };
  did: {
    service: DidService;
    verifyLoginPresentation: VerifyLoginPresentation;
    findUserIdByHolder: FindUserIdByHolder;
    isRegistered(did: string): Promise<boolean>;
    didForAddress(address: string): string;
  };
  wallet: WalletService;
  blocks: BlockReader;
  ipfs: IpfsBackend;
  payments: Pick<PaymentService, 'authenticateStore' | 'paymentStatus'>;
  receipts: ReceiptService;
  statements: Pick<StatementService, 'open' | 'operatorDay'>;
  pay: PayService;
  transferStatuses: TransferStatusDeps;
  console: ConsoleRoutesDeps;
  x402: X402RoutesDeps;
  metrics: Metrics;
  readiness: Readiness;
}
