import { AsyncLocalStorage } from 'node:async_hooks';
import { createAgent, type IDIDManager, type IKeyManager, type IResolver, type TAgent } from '@veramo/core';
import { KeyManager } from '@veramo/key-manager';
import { KeyManagementSystem } from '@veramo/kms-local';
import { DIDManager } from '@veramo/did-manager';
import { EthrDIDProvider } from '@veramo/did-provider-ethr';
import { DIDResolverPlugin } from '@veramo/did-resolver';
import { Resolver, type DIDResolver, type Resolvable } from 'did-resolver';
import { getResolver as getEthrResolver } from 'ethr-did-resolver';
import { FetchRequest, JsonRpcProvider } from 'ethers';
import { DomainError } from '#shared/errors.ts';
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
  /**
   * The deadline of each call to the chain's node, in ms (`CHAIN_CALL_TIMEOUT_SECONDS`, given by the
   * composition root); 5 s when not given.
   */
  callTimeoutMs?: number | undefined;
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

type EthrNetwork = NonNullable<Extract<Parameters<typeof getEthrResolver>[0], { networks?: unknown }>['networks']>[number];

/** What one DID resolution learnt of its calls to the node: whether one got no answer, and why. */
interface ResolutionCalls {
  unanswered?: { cause: unknown };
}

const resolutionCalls = new AsyncLocalStorage<ResolutionCalls>();

/**
 * The ethers provider ethr-did-resolver and EthrDIDProvider call our chain's node through, made once
 * per agent instead of theirs (whose calls wait up to ethers' 300 s): each call is bounded by the chain
 * call deadline, the chain id is known (no network detection call), and a call the node did not answer
 * (deadline passed, connection refused, an HTTP error instead of a JSON-RPC answer) is noted for the
 * resolution that made it. Each call is its caller's own (no answer cached across callers), so a
 * resolution learns of its own calls only.
 */
class DidNodeProvider extends JsonRpcProvider {
  readonly #unanswered = new WeakSet<object>();

  constructor(chain: DidChain) {
    const request = new FetchRequest(chain.rpcUrl);
    request.timeout = chain.callTimeoutMs ?? 5_000;
    super(request, chain.chainId, { staticNetwork: true, cacheTimeout: -1 });
  }

  /** One HTTP round trip to the node: what fails here got no JSON-RPC answer from it. */
  override async _send(payload: Parameters<JsonRpcProvider['_send']>[0]): ReturnType<JsonRpcProvider['_send']> {
    try {
      return await super._send(payload);
    } catch (error) {
      if (typeof error === 'object' && error !== null) this.#unanswered.add(error);
      throw error;
    }
  }

  /** Runs in its caller's async context (the round trip above runs in a batch timer's). */
  override async send(method: string, params: Parameters<JsonRpcProvider['send']>[1]): ReturnType<JsonRpcProvider['send']> {
    try {
      return await super.send(method, params);
    } catch (error) {
      const calls = resolutionCalls.getStore();
      if (calls && !calls.unanswered && typeof error === 'object' && error !== null && this.#unanswered.has(error)) calls.unanswered = { cause: error };
      throw error;
    }
  }
}

/**
 * ethr-did-resolver on `provider`. It answers a failed node call as a DID document not found; one the
 * node did not answer throws `chain.unavailable` instead (the DID may well resolve: ask again later),
 * while a DID that does not resolve for another reason (malformed, another network) is answered as
 * ethr-did-resolver answers it.
 */
function ethrResolverOn(chain: DidChain, provider: DidNodeProvider): Resolvable {
  const { ethr } = getEthrResolver({
    // Its types name ethers' CommonJS build, the ESM one at run time (ours): the same provider.
    networks: [{ name: 'mainnet', chainId: chain.chainId, provider: provider as unknown as EthrNetwork['provider'], registry: chain.registry }],
  }) as { ethr: DIDResolver };
  const resolve: DIDResolver = async (did, parsed, resolver, options) => {
    const calls: ResolutionCalls = {};
    const result = await resolutionCalls.run(calls, () => ethr(did, parsed, resolver, options));
    if (result.didResolutionMetadata.error && calls.unanswered) {
      throw new DomainError('chain.unavailable', `the chain's node did not answer while resolving ${did}`, { cause: calls.unanswered.cause });
    }
    return result;
  };
  return new Resolver({ ethr: resolve });
}

/**
 * A did:ethr resolver for our chain only. A DID without a network segment (`did:ethr:0x…`) is
 * resolved on the network named `mainnet` (ethr-did-resolver's rule), so our chain is configured
 * under that name; `did:ethr:0x7a69:0x…` (its chain id in hex) resolves on it too. No public node
 * is ever asked. Each node call has the chain call deadline; a resolution the node did not answer
 * throws `chain.unavailable`.
 */
export function createEthrResolver(chain: DidChain): Resolvable {
  return ethrResolverOn(chain, new DidNodeProvider(chain));
}

/** Veramo over our tables (keys sealed by the vault) and our chain. */
export function createDidAgent(deps: DidAgentDeps): DidAgent {
  const { stores, chain } = deps;
  const tokenKms: Record<string, AbstractKeyManagementSystem> = deps.tokenKms ? { [tokenKmsName]: deps.tokenKms } : {};
  const provider = new DidNodeProvider(chain);
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
            networks: [{ name: 'mainnet', chainId: chain.chainId, provider, registry: chain.registry }],
          }),
        },
      }),
      // did-resolver 6 (ours) and 4 (Veramo's) differ only in how they type `@context`.
      new DIDResolverPlugin({ resolver: ethrResolverOn(chain, provider) } as unknown as ConstructorParameters<typeof DIDResolverPlugin>[0]),
    ],
  });
}
