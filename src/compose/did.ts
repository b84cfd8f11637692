/**
 * DIDs, VCs and VPs of the platform (the Veramo agent over our store and the ethereum network's DID
 * registry), and the receipts of approvals, refunds and reward claims it issues as credentials.
 */
import type { Config } from '../config/config.ts';
import type { Clock } from '#shared/clock.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Store } from '../store/db.ts';
import type { WalletRepository } from '../store/wallet-repository.ts';
import { createReceiptRepository } from '../store/receipt-repository.ts';
import { createVeramoStores } from '../store/veramo-stores.ts';
import { createHolderLookup } from '../store/holder-lookup.ts';
import type { ChainClients } from '../chain/chain-clients.ts';
import type { WalletService } from '../wallet/wallet-service.ts';
import { keccak256, recoverPublicKey, stringToBytes, type Address } from 'viem';
import { createDidAgent, type DidAgent } from '../did/did-agent.ts';
import { TokenKeyManagementSystem } from '../did/token-kms.ts';
import type { Pkcs11Token } from '../chain/pkcs11-token.ts';
import { tokenWrappedKeys } from '../chain/token-wrapped-keys.ts';
import { createDidRepository, type DidListEntry, type SystemDidRole } from '../store/did-repository.ts';
import { didForAddress, ensureSystemDids } from '../did/did-identifiers.ts';
import { createDidService, type DidService } from '../did/did-service.ts';
import { createVpLogin, type VerifyLoginPresentation } from '../did/vp-login.ts';
import { createHolderBinding, type FindUserIdByHolder } from '../did/holder-binding.ts';
import { createReceiptService, type ReceiptService } from '../receipts/receipt-service.ts';
import { knownNetwork, signingIdentityOf } from '../receipts/receipt-issuer.ts';

/** DIDs, VCs and VPs of the platform. */
export interface DidModule {
  agent: DidAgent;
  service: DidService;
  verifyLoginPresentation: VerifyLoginPresentation;
  /** The user a VP holder logs in as (see holder-binding.ts). */
  findUserIdByHolder: FindUserIdByHolder;
  /** Whether a DID is registered with the platform (what `/v2/auth/me` reports for a wallet's did:ethr). */
  isRegistered(did: string): Promise<boolean>;
  /** The did:ethr of a wallet address. */
  didForAddress(address: string): string;
  systemDids: Record<SystemDidRole, DidListEntry[]>;
}

/** The Veramo agent over our store and chain; the system issuer and verifier DIDs made on first start (reused after). */
export async function composeDid(
  store: Store, vault: KeyVault, wallets: WalletRepository, clock: Clock,
  /** The ethereum network's node and DID registry; `callTimeoutMs`: CHAIN_CALL_TIMEOUT_SECONDS, the deadline of each call to it. */
  chain: { rpcUrl: string; chainId: number; registry: `0x${string}`; callTimeoutMs?: number },
  custody?: Pkcs11Token,
): Promise<DidModule> {
  // KEY_CUSTODY=pkcs11: DIDs over wallets whose keys the token wraps sign there (their signatures are
  // rare: none is kept unwrapped for the next).
  const tokenKeys = custody && tokenWrappedKeys(custody, { unwrappedKeys: 0 });
  const tokenKms = tokenKeys && new TokenKeyManagementSystem(async (address) => {
    const account = await wallets.findAccount(address);
    return account && tokenKeys.holds(account.privateKeyEnc) ? tokenKeys.account(account.privateKeyEnc, address) : undefined;
  });
  const tokenPublicKey = tokenKeys && (async (sealed: string, address: Address) => {
    const hash = keccak256(stringToBytes(`vixpay: the public key of ${address}`));
    const account = tokenKeys.account(sealed, address);
    return recoverPublicKey({ hash, signature: await account.sign!({ hash }) });
  });
  const agent = createDidAgent({ stores: createVeramoStores(store.db, vault, clock), chain, tokenKms });
  const repository = createDidRepository(store.db);
  const systemDids = await ensureSystemDids({ agent, repository });
  const service = createDidService({ agent, repository, wallets, vault, clock, tokenPublicKey });
  return {
    agent, service, systemDids,
    verifyLoginPresentation: createVpLogin({ agent, repository, clock }),
    findUserIdByHolder: createHolderBinding(createHolderLookup(store.db)),
    isRegistered: (did) => repository.exists(did),
    didForAddress,
  };
}

/** Receipts (verifiable credentials) of approvals, refunds and reward claims, issued by the system issuer DID on first read. */
export function composeReceipts(
  config: Config, deps: { store: Store; clock: Clock; did: DidModule; wallet: WalletService; chains: ChainClients },
): ReceiptService {
  const { did, wallet, chains } = deps;
  return createReceiptService({
    receipts: createReceiptRepository(deps.store.db), agent: did.agent, clock: deps.clock, timeZone: config.timeZone,
    issuer: () => signingIdentityOf(did.agent, did.systemDids.issuer[0]!.did),
    tokenDecimals: async (network, contractAddress) => (await wallet.getTokenInfo(knownNetwork(network), { contractAddress })).decimals,
    chainIdOf: (network) => chains[knownNetwork(network)].chainId,
  });
}
