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

export function isNetworkName(value: string): value is NetworkName {
  return (networkNames as readonly string[]).includes(value);
}
