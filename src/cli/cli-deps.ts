import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { UserService } from '../identity/users.ts';
import type { PaymentDeps } from '../payments/payment-deps.ts';
import type { SettlementTokenAllowListDeps } from '../payments/settlement-token-allow-list.ts';
import type { WebhookEndpointDeps } from '../webhooks/webhook-endpoints.ts';
import type { OperatorDeps } from '../console/operators.ts';
import type { FacilitatorKeyDeps } from '../x402/facilitator-keys.ts';
import type { StatementService } from '../statements/statement-service.ts';
import type { KeyMigrationResult } from '../wallet/key-migration-result.ts';

/** The platform core a command runs on beside the running server (its chains attached). */
export interface CliPlatform {
  config: Config;
  chains: Pick<ChainClients, NetworkName>;
  contracts: PlatformContractsByNetwork;
  /** The relayer's lanes (lane 0 the treasury) and its journaled sends: `vixpay lanes fund`. */
  relayer: Pick<Relayer, 'lanes' | 'send'>;
  wallet: WalletService;
  identity: { users: UserService };
  did: { systemDids: { issuer: Array<{ did: string }> } };
  admin: {
    stores: Pick<PaymentDeps, 'merchants' | 'wallet' | 'clock' | 'timeZone' | 'network' | 'settlementTokens'>;
    settlementTokens: SettlementTokenAllowListDeps;
  };
  statements: Pick<StatementService, 'open' | 'operatorDay'>;
}

/** The records a command manages with only the store and the key vault. */
export interface CliStoreRecords {
  webhooks: WebhookEndpointDeps;
  operators: Pick<OperatorDeps, 'operators' | 'passwords' | 'clock'>;
  facilitatorKeys: FacilitatorKeyDeps;
}

/** What `src/main.ts` gives the CLI: every command's access to the platform, built by the composition root. */
export interface CliDeps {
  withPlatform<T>(config: Config, logger: Logger, work: (platform: CliPlatform) => Promise<T>): Promise<T>;
  withStoreRecords<T>(config: Config, work: (records: CliStoreRecords) => Promise<T>): Promise<T>;
  rotateSigningKeys(config: Config): Promise<{ kid: string; retired: string[]; retiredAt: number }>;
  /** `vixpay keys migrate --to pkcs11`: every key of the platform into the HSM token (src/compose/key-migration.ts). */
  migrateKeys(config: Config, options: { rotate: boolean }): Promise<KeyMigrationResult>;
  /** `vixpay serve`: the whole platform, as `npm start`. */
  serve(config: Config, logger: Logger): Promise<void>;
}
