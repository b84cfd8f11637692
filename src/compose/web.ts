/**
 * What the HTTP interfaces need beyond the core services: the REST pay service, the transfer-status
 * records the token API answers `getTransferStatus` from, and the operator console's dependencies.
 */
import { formatEther, type Hex } from 'viem';
import type { Config } from '../config/config.ts';
import type { Clock } from '#shared/clock.ts';
import type { Faults } from '#shared/failpoints.ts';
import { domainErrorCodes, type DomainErrorCode } from '#shared/errors.ts';
import { isNetworkName, networkNames } from '#shared/networks.ts';
import type { Store } from '../store/db.ts';
import { countJournalBacklog } from '../store/journal-backlog.ts';
import { createConsoleRepository } from '../store/console-repository.ts';
import { createOperatorRepository } from '../store/operator-repository.ts';
import { createIdempotencyRepository } from '../store/idempotency-repository.ts';
import { createSettlementTokenRepository } from '../store/settlement-token-repository.ts';
import { createTransferStatusRepository } from '../store/transfer-status-repository.ts';
import { createPasswordHasher } from '../identity/password-hasher.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import { receiptAtDepth } from '../chain/receipt-at-depth.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import type { ReceiptService } from '../receipts/receipt-service.ts';
import { verifyReceipt, type ReceiptVerification, type VerifyReceiptDeps } from '../receipts/verify-receipt.ts';
import { createEthrResolver } from '../did/did-agent.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { DidModule } from './did.ts';
import { createPayService, type PayService } from '../pay/idempotent-pay.ts';
import type { TransferStatusDeps } from '../pay/transfer-status.ts';
import { resCodeByFamily, success } from '../payments/result-codes.ts';
import type { ConsoleFiguresDeps } from '../console/console-figures.ts';
import type { OperatorDeps } from '../console/operators.ts';
import type { ConsoleRepository } from '../store/console-repository.ts';
import type { Identity } from './identity.ts';

/** A console login lasts a working day; logging out ends it at once. */
export const consoleSessionTtlMs = 8 * 3600_000;

const inProgress = { resCode: 'pending', resMessage: 'In progress' };

export interface ConsoleDeps {
  operators: OperatorDeps;
  figures: ConsoleFiguresDeps;
  repository: ConsoleRepository;
  receipts: ReceiptService;
  /** The chain of a network, or undefined for a name that is not one of ours. */
  chainOf(network: string): ChainClients[keyof ChainClients] | undefined;
  /** The receipt page's verdict: `vixpay receipt verify`'s checks (docs/receipts.md). */
  verifyReceipt(receipt: unknown): Promise<ReceiptVerification>;
}

export interface WebServices {
  /** REST pay (`/v1/ict/pay`): idempotent by key, one transfer per key. */
  pay: PayService;
  /** Transfers by their TransactionID (`getTransferStatus` of the token API), checked against the node. */
  transferStatuses: TransferStatusDeps;
  console: ConsoleDeps;
}

interface WebCore {
  store: Store;
  clock: Clock;
  chains: ChainClients;
  relayer: Relayer;
  wallet: WalletService;
  identity: Identity;
  receipts: ReceiptService;
  faults: Faults;
  did: Pick<DidModule, 'systemDids'>;
  contracts: PlatformContractsByNetwork;
}

export function composeWeb(config: Config, core: WebCore): WebServices {
  const transferStatuses = createTransferStatusRepository(core.store.db);
  return {
    transferStatuses: {
      transfers: transferStatuses,
      receiptIsFinal: (network, txHash) =>
        isNetworkName(network) ? receiptAtDepth(core.chains[network].client, txHash as Hex, config.confirmations[network]) : Promise.resolve(false),
    },
    pay: createPayService({
      users: core.identity.users, rateLimiter: core.identity.rateLimiter, wallet: core.wallet, network: config.paymentNetwork,
      settlementTokens: createSettlementTokenRepository(core.store.db), receiver: config.payReceiverAddress ?? core.relayer.address,
      keys: createIdempotencyRepository(core.store.db), transfers: transferStatuses, clock: core.clock, faults: core.faults,
    }),
    console: composeConsole(config, core),
  };
}

/** The operator console (docs/console.md): its own operators and sessions, its figures over the store and the chains. */
function composeConsole(config: Config, core: WebCore): ConsoleDeps {
  const { chains, wallet, store } = core;
  const network = (name: string) => {
    if (!isNetworkName(name)) throw new Error(`unknown network ${name}`);
    return name;
  };
  const repository = createConsoleRepository(store.db);
  // As `vixpay receipt verify` checks: ethr-did-resolver on our chain's registry, not the platform's agent.
  const { ethereum } = chains;
  const resolver = createEthrResolver({
    chainId: ethereum.chainId, rpcUrl: ethereum.url, registry: core.contracts.ethereum.didRegistry, callTimeoutMs: config.chainCallTimeoutMs,
  }) as unknown as VerifyReceiptDeps['resolver'];
  return {
    operators: {
      operators: createOperatorRepository(store.db), passwords: createPasswordHasher(), rateLimiter: core.identity.consoleRateLimiter,
      clock: core.clock, sessionTtlMs: consoleSessionTtlMs,
    },
    repository,
    receipts: core.receipts,
    chainOf: (name) => (isNetworkName(name) ? chains[name] : undefined),
    verifyReceipt: (receipt) => verifyReceipt({
      resolver, systemIssuers: core.did.systemDids.issuer.map((entry) => entry.did), chainOf: (name) => (isNetworkName(name) ? chains[name] : undefined),
    }, receipt),
    figures: {
      repository,
      clock: core.clock,
      tokenDecimals: async (name, contractAddress) => (await wallet.getTokenInfo(network(name), { contractAddress })).decimals,
      storeBalance: async (address) => {
        const { balance } = await wallet.getBalance(config.paymentNetwork, { address });
        const token = await wallet.getTokenInfo(config.paymentNetwork, {});
        return { balance, token: token.tokenSymbol, network: config.paymentNetwork };
      },
      nativeBalance: async (name, address) => formatEther(await chains[network(name)].client.getBalance({ address: address as `0x${string}` })),
      journalBacklog: () => countJournalBacklog(store.db),
      networks: networkNames,
      relayerLanes: core.relayer.lanes,
      timeZone: config.timeZone,
      // The res_code the POS was answered (docs/payments.md's table).
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
