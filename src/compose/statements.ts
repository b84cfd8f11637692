/**
 * Daily statements (docs/statements.md): a store's day reconciled against the payment network, the
 * operator's day of gas and fees, and, on a server, the periodic check that writes `statement.ready`
 * once a day has closed.
 */
import type { Config } from '../config/config.ts';
import type { Logger } from '#shared/logger.ts';
import type { Clock } from '#shared/clock.ts';
import { networkNames } from '#shared/networks.ts';
import { runPeriodically } from '#shared/periodic.ts';
import type { Store } from '../store/db.ts';
import { createStatementRepository } from '../store/statement-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { createMerchantRepository } from '../store/merchant-repository.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import { createStatementChain } from '../statements/statement-chain.ts';
import { createStatementService, type StatementService } from '../statements/statement-service.ts';

/** How often a server checks for days that closed (a day is announced a minute after it ends, or at the next check). */
const statementReadyCheckMs = 60_000;

export function composeStatements(
  config: Config, deps: { store: Store; clock: Clock; logger: Logger; chains: ChainClients; wallet: WalletService },
  options: { server: boolean }, cleanups: Array<() => Promise<void>>,
): StatementService {
  const network = config.paymentNetwork;
  const settlementTokens = createSettlementTokenRepository(deps.store.db);
  const token = async (contractAddress?: string) => {
    const info = await deps.wallet.getTokenInfo(network, contractAddress ? { contractAddress } : {});
    return { contractAddress: info.contractAddress, symbol: info.tokenSymbol, decimals: info.decimals };
  };
  const merchants = createMerchantRepository(deps.store.db);
  const service = createStatementService({
    findStore: (tid) => merchants.findStore(tid),
    repository: createStatementRepository(deps.store.db), chain: createStatementChain(deps.chains[network].client), network, networks: networkNames,
    tokens: async () => [await token(), ...await Promise.all((await settlementTokens.list(network)).map((t) => token(t.contractAddress)))],
    token: (contractAddress) => token(contractAddress), clock: deps.clock, timeZone: config.timeZone,
  });
  if (options.server) {
    const check = runPeriodically(() => service.announceClosedDays()
      .catch((err: unknown) => deps.logger.warn({ err }, 'statement.ready check failed')), statementReadyCheckMs);
    cleanups.push(check.stop);
  }
  return service;
}
