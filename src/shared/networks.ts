/** The four networks of docs/interfaces.md#networks. Chain ids are the embedded anvil ids; a real node reports its own. */
export const networkNames = ['ethereum', 'optimism', 'bnb', 'opbnb'] as const;
export type NetworkName = (typeof networkNames)[number];

/** Local development chain ids for the supervised anvil chains: distinct, and never a public chain's. */
export const anvilChainIds: Readonly<Record<NetworkName, number>> = {
  ethereum: 31337,
  optimism: 31338,
  bnb: 31339,
  opbnb: 31340,
};

/** What a network is on its public chain: the chain id its nodes answer, its coin, its block explorer. */
export interface NetworkFacts {
  /** The public chain's id: a node given by URL must answer it (`CHAIN_ID_<NETWORK>` names a test chain's instead). */
  chainId: number;
  /** The native coin gas is paid in. */
  coin: { name: string; symbol: string };
  /** The block explorer of the public chain: `${explorer}/tx/<hash>`, `${explorer}/address/<address>`. */
  explorer: string;
}

export const networkFacts: Readonly<Record<NetworkName, NetworkFacts>> = {
  ethereum: { chainId: 1, coin: { name: 'Ether', symbol: 'ETH' }, explorer: 'https://etherscan.io' },
  optimism: { chainId: 10, coin: { name: 'Ether', symbol: 'ETH' }, explorer: 'https://optimistic.etherscan.io' },
  bnb: { chainId: 56, coin: { name: 'BNB', symbol: 'BNB' }, explorer: 'https://bscscan.com' },
  opbnb: { chainId: 204, coin: { name: 'BNB', symbol: 'BNB' }, explorer: 'https://opbnb.bscscan.com' },
};

/** The native coin's symbol of a network (ETH, BNB): the same on its public chain and on a test chain standing for it. */
export function coinSymbol(network: string): string {
  return isNetworkName(network) ? networkFacts[network].coin.symbol : 'ETH';
}

/** The block explorer of a chain, when `chainId` is its network's public chain (a test chain has none). */
export function explorerOf(network: string, chainId: number): string | undefined {
  return isNetworkName(network) && networkFacts[network].chainId === chainId ? networkFacts[network].explorer : undefined;
}

export function isNetworkName(value: string): value is NetworkName {
  return (networkNames as readonly string[]).includes(value);
}
