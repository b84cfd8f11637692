import { createAgent, type IDIDManager, type IKeyManager, type IResolver, type TAgent } from '@veramo/core';
import { KeyManager } from '@veramo/key-manager';
import { KeyManagementSystem } from '@veramo/kms-local';
import { DIDManager } from '@veramo/did-manager';
import { EthrDIDProvider } from '@veramo/did-provider-ethr';
import { DIDResolverPlugin } from '@veramo/did-resolver';
import { Resolver, type Resolvable } from 'did-resolver';
import { getResolver as getEthrResolver } from 'ethr-did-resolver';
import { tokenKms as tokenKmsName } from './token-kms.ts';
import type { AbstractKeyManagementSystem, AbstractKeyStore, AbstractPrivateKeyStore } from '@veramo/key-manager';
import type { AbstractDIDStore } from '@veramo/did-manager';

/** The Veramo agent of the platform: keys, DIDs and DID resolution. */
export type DidAgent = TAgent<IKeyManager & IDIDManager & IResolver>;

/** Our ERC-1056 registry on our own chain: where every `did:ethr` we handle is resolved. */
export interface DidChain {
  rpcUrl: string;
  chainId: number;
  registry: string;
}

/** Where the agent keeps its keys (the private ones sealed), and its DIDs: store/veramo-stores.ts. */
export interface DidAgentStores {
  keys: AbstractKeyStore;
  privateKeys: AbstractPrivateKeyStore;
  dids: AbstractDIDStore;
}

export interface DidAgentDeps {
  stores: DidAgentStores;
  chain: DidChain;
  /** With KEY_CUSTODY=pkcs11: the KMS over the wallets' keys in the HSM token (token-kms.ts), beside the local one. */
  tokenKms?: AbstractKeyManagementSystem | undefined;
}

/** Name of the local KMS and of our DID provider in the agent. */
export const localKms = 'local';
export const ethrProvider = 'did:ethr';

/**
 * A did:ethr resolver for our chain only. A DID without a network segment (`did:ethr:0x…`) is
 * resolved on the network named `mainnet` (ethr-did-resolver's rule), so our chain is configured
 * under that name; `did:ethr:0x7a69:0x…` (its chain id in hex) resolves on it too. No public node
 * is ever asked.
 */
export function createEthrResolver(chain: DidChain): Resolvable {
  return new Resolver(getEthrResolver({
    networks: [{ name: 'mainnet', chainId: chain.chainId, rpcUrl: chain.rpcUrl, registry: chain.registry }],
  }));
}

/** Veramo over our tables (keys sealed by the vault) and our chain. */
export function createDidAgent(deps: DidAgentDeps): DidAgent {
  const { stores, chain } = deps;
  const tokenKms: Record<string, AbstractKeyManagementSystem> = deps.tokenKms ? { [tokenKmsName]: deps.tokenKms } : {};
  return createAgent<IKeyManager & IDIDManager & IResolver>({
    plugins: [
      new KeyManager({
        store: stores.keys,
        kms: { [localKms]: new KeyManagementSystem(stores.privateKeys), ...tokenKms },
      }),
      new DIDManager({
        store: stores.dids,
        defaultProvider: ethrProvider,
        providers: {
          [ethrProvider]: new EthrDIDProvider({
            defaultKms: localKms,
            networks: [{ name: 'mainnet', chainId: chain.chainId, rpcUrl: chain.rpcUrl, registry: chain.registry }],
          }),
        },
      }),
      // did-resolver 6 (ours) and 4 (Veramo's) differ only in how they type `@context`.
      new DIDResolverPlugin({ resolver: createEthrResolver(chain) } as unknown as ConstructorParameters<typeof DIDResolverPlugin>[0]),
    ],
  });
}
