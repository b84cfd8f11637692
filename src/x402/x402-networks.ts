import type { ChainClients } from '../chain/chain-clients.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';

/** The x402 (CAIP-2) name of one of our networks: `eip155:<chain id the node reports>`. */
export function x402NetworkOf(chains: Pick<ChainClients, NetworkName>, network: NetworkName): `eip155:${number}` {
  return `eip155:${chains[network].chainId}`;
}

/** Our network named by an x402 network (`eip155:<chain id>`); undefined when none of ours is that chain. */
export function networkOfX402(chains: Pick<ChainClients, NetworkName>, x402Network: string): NetworkName | undefined {
  return networkNames.find((network) => x402NetworkOf(chains, network) === x402Network);
}
