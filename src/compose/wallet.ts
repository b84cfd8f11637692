/**
 * The custodial wallet over the chains: VIXP registered as a token of every network, transfers
 * counted in the metrics, and the sweep that ends authorizations a crash or an outage left open.
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import { walletKeys } from '../wallet/wallet-keys.ts';
import { tokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Metrics } from '#shared/metrics.ts';
import type { Faults } from '#shared/failpoints.ts';
import { networkNames } from '#shared/networks.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Store } from '../store/db.ts';
import { createWalletRepository, type WalletRepository } from '../store/wallet-repository.ts';
import { createAuthorizationRepository } from '../store/authorization-repository.ts';
import { vixpDecimals, vixpName, vixpSymbol } from '../chain/platform-contracts.ts';
import { createWalletService, type WalletService } from '../wallet/wallet-service.ts';
import { createDelegatedAccounts } from '../wallet/delegated-accounts.ts';
import type { ChainPart } from './chain.ts';
import { withTransferMetrics } from './observability.ts';

const authorizationSweepMs = 15_000;

export async function composeWallet(
  config: Config,
  deps: { logger: Logger; clock: Clock; vault: KeyVault; store: Store; metrics: Metrics; chain: ChainPart; faults: Faults },
  cleanups: Array<() => Promise<void>>,
): Promise<{ wallet: WalletService; repo: WalletRepository }> {
  const { store, clock, chain } = deps;
  const repo = createWalletRepository(store.db);
  // VIXP is a token of the wallet on every network (owned by the platform account).
  for (const network of networkNames) {
    await repo.insertToken({
      network, contract_address: chain.contracts[network].vixpToken, symbol: vixpSymbol, name: vixpName, decimals: vixpDecimals,
      owner: chain.relayer.address, created_at: clock(),
    });
  }
  const wallet = withTransferMetrics(createWalletService({
    repo, vault: deps.vault, keys: walletKeys(deps.vault, chain.custody && tokenWrappedKeys(chain.custody, { unwrappedKeys: config.pkcs11UnwrappedKeys })), clock, chains: chain.chains, relayer: chain.relayer, contracts: chain.contracts,
    tempKeyTtlMs: config.tempKeyTtlMs, faults: deps.faults,
    authorizations: createAuthorizationRepository(store.db, store.dialect === 'sqlite' ? 'process' : 'row'),
    authorizationTtlSeconds: config.authorizationTtlSeconds, eip7702: config.eip7702, delegated: createDelegatedAccounts(),
  }), deps.metrics);
  // Authorizations left open by a crash or a chain outage end used, cancelled or expired once
  // their short validity has passed; their held funds are then free again.
  const sweep = () => Promise.all(networkNames.map((network) => wallet.sweepExpiredAuthorizations(network)))
    .catch((err: unknown) => deps.logger.warn({ err }, 'authorization sweep failed'));
  await sweep();
  cleanups.push(runPeriodically(sweep, authorizationSweepMs).stop);
  return { wallet, repo };
}
