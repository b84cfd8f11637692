import type { KeyVault } from '#shared/key-vault.ts';
import type { Clock } from '#shared/clock.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import type { AuthorizationRepository } from '../store/authorization-repository.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { Relayer } from '../chain/relayer.ts';
import type { PlatformContractsByNetwork } from '../chain/platform-contracts.ts';
import type { Faults } from '#shared/failpoints.ts';
import type { WalletKeys } from './wallet-keys.ts';
import type { NetworkName } from '#shared/networks.ts';
import type { DelegatedAccounts } from './delegated-accounts.ts';

/** What the wallet operations need; each operation takes the narrowest part of it. */
export interface WalletDeps {
  repo: WalletRepository;
  vault: KeyVault;
  /** Where the wallets' private keys are kept (KEY_CUSTODY); unset: sealed with `vault`. */
  keys?: WalletKeys;
  clock: Clock;
  chains: ChainClients;
  relayer: Relayer;
  contracts: PlatformContractsByNetwork;
  tempKeyTtlMs: number;
  authorizations: AuthorizationRepository;
  /** How long a signed EIP-3009 authorization stays valid on chain. */
  authorizationTtlSeconds: number;
  /** Per network: its node runs EIP-7702 (`EIP7702_<NETWORK>`), so custodial transfers take the account path (transfer-path.ts). */
  eip7702: Readonly<Record<NetworkName, boolean>>;
  /** The accounts seen delegated to the account contract, so a transfer does not ask the node again (delegated-accounts.ts). */
  delegated: DelegatedAccounts;
  /** The fault suite's failpoints (src/shared/failpoints.ts); none unless a test arms them. */
  faults?: Faults;
}
