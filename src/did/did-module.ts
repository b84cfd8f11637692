import type { Db } from '../store/db.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import type { KeyVault } from '../shared/key-vault.ts';
import { systemClock, type Clock } from '../shared/clock.ts';
import { createDidAgent, type DidAgent, type DidChain } from './did-agent.ts';
import { createDidRepository, type DidListEntry, type SystemDidRole } from './did-repository.ts';
import { ensureSystemDids } from './did-identifiers.ts';
import { createDidService, type DidService } from './did-service.ts';
import { createVpLogin, type VerifyLoginPresentation } from './vp-login.ts';
import { createHolderBinding, type FindUserIdByHolder } from './holder-binding.ts';

export interface StartDidDeps {
  db: Db;
  vault: KeyVault;
  wallets: Pick<WalletRepository, 'findAccount'>;
  /** Our ethereum network and the ERC-1056 registry deployed on it. */
  chain: DidChain;
  clock?: Clock;
  presentationTtlSeconds?: number;
}

/** DIDs, VCs and VPs of the platform, ready to serve. */
export interface DidModule {
  agent: DidAgent;
  service: DidService;
  verifyLoginPresentation: VerifyLoginPresentation;
  /** The user a VP holder logs in as (see holder-binding.ts). */
  findUserIdByHolder: FindUserIdByHolder;
  systemDids: Record<SystemDidRole, DidListEntry[]>;
}

/**
 * Builds the Veramo agent over our store and chain and makes the system issuer and verifier DIDs
 * on first start (reused after).
 *
 * @example
 * const did = await startDid({
 *   db: store.db, vault, wallets: repo, clock,
 *   chain: { rpcUrl: chains.ethereum.url, chainId: chains.ethereum.chainId, registry: contracts.ethereum.didRegistry },
 * });
 */
export async function startDid(deps: StartDidDeps): Promise<DidModule> {
  const clock = deps.clock ?? systemClock;
  const agent = createDidAgent({ db: deps.db, vault: deps.vault, clock, chain: deps.chain });
  const repository = createDidRepository(deps.db);
  const systemDids = await ensureSystemDids({ agent, repository });
  const service = createDidService({
    agent, repository, wallets: deps.wallets, vault: deps.vault, clock, presentationTtlSeconds: deps.presentationTtlSeconds,
  });
  return {
    agent, service, systemDids,
    verifyLoginPresentation: createVpLogin({ agent, repository, clock }),
    findUserIdByHolder: createHolderBinding(deps.db),
  };
}
