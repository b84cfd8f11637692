import { formatEther } from 'viem';
import type { Platform } from '../../../compose.ts';
import { domainErrorCodes, type DomainErrorCode } from '../../../shared/errors.ts';
import { isNetworkName, networkNames } from '../../../shared/networks.ts';
import { countJournalBacklog } from '../../../store/journal-backlog.ts';
import { createConsoleRepository } from '../../../store/console-repository.ts';
import { createOperatorRepository } from '../../../store/operator-repository.ts';
import { createPasswordHasher } from '../../../identity/password-hasher.ts';
import { resCodeByFamily, success } from '../../grpc/res-codes.ts';
import type { ConsoleRoutesDeps } from './console.ts';

/** A console login lasts a working day; logging out ends it at once. */
export const consoleSessionTtlMs = 8 * 3600_000;

const inProgress = { resCode: 'pending', resMessage: 'In progress' };

/** The console's dependencies on a composed platform. */
export function consoleDeps(platform: Platform): ConsoleRoutesDeps {
  const { config, chains, wallet, store } = platform;
  const network = (name: string) => {
    if (!isNetworkName(name)) throw new Error(`unknown network ${name}`);
    return name;
  };
  const repository = createConsoleRepository(store.db);
  return {
    operators: {
      operators: createOperatorRepository(store.db), passwords: createPasswordHasher(), rateLimiter: platform.identity.rateLimiter,
      clock: platform.clock, sessionTtlMs: consoleSessionTtlMs,
    },
    repository,
    receipts: platform.receipts,
    chainOf: (name) => (isNetworkName(name) ? chains[name] : undefined),
    figures: {
      repository,
      clock: platform.clock,
      tokenDecimals: async (name, contractAddress) => (await wallet.getTokenInfo(network(name), { contractAddress })).decimals,
      storeBalance: async (address) => {
        const { balance } = await wallet.getBalance(config.paymentNetwork, { address });
        const token = await wallet.getTokenInfo(config.paymentNetwork, {});
        return { balance, token: token.tokenSymbol, network: config.paymentNetwork };
      },
      nativeBalance: async (name, address) => formatEther(await chains[network(name)].client.getBalance({ address: address as `0x${string}` })),
      journalBacklog: () => countJournalBacklog(store.db),
      networks: networkNames,
      relayerLanes: platform.relayer.lanes,
      timeZone: config.timeZone,
      // The res_code the POS was answered (SPEC.md's payment table and ours, docs/payments.md).
      resCodeOf: (status, failureCode) => {
        if (status === 'approved') return { resCode: success.res_code, resMessage: success.res_message };
        if (status === 'pending') return inProgress;
        const code = (domainErrorCodes as readonly string[]).includes(failureCode ?? '') ? failureCode as DomainErrorCode : 'internal';
        const answered = resCodeByFamily.payment[code];
        return { resCode: answered.res_code, resMessage: answered.res_message };
      },
    },
  };
}
