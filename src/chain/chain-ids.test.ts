import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foundry } from 'viem/chains';
import { startAnvil } from './anvil-process.ts';
import { createChainClients } from './chain-clients.ts';
import { networkFacts, networkNames, type NetworkName } from '#shared/networks.ts';
import type { ChainEndpoint } from './chain-supervisor.ts';

const given = (url: string, chainId: (network: NetworkName) => number) => Object.fromEntries(networkNames.map((network) =>
  [network, { network, url, urls: [url], managed: false as const, chainId: chainId(network) }])) as unknown as Record<NetworkName, ChainEndpoint>;

test('a node given by URL must answer its network\'s chain id: another refuses the start, naming both ids and CHAIN_ID_<NETWORK>; the coin is the network\'s', async () => {
  const anvil = await startAnvil({ chainId: foundry.id });
  try {
    await assert.rejects(createChainClients(given(anvil.url, (network) => networkFacts[network].chainId), 50), (error: Error & { code?: string }) => {
      assert.equal(error.code, 'chain.unavailable');
      assert.match(error.message, /^the node of (ethereum|optimism|bnb|opbnb) \(127\.0\.0\.1:\d+\) answers chain id 31337, not \1's (1|10|56|204): a node of another chain, refused; for a test chain or testnet standing for \1, set CHAIN_ID_[A-Z]+=31337$/);
      return true;
    });
    await assert.rejects(createChainClients(given(anvil.url, () => 11155111), 50), /answers chain id 31337, not CHAIN_ID_[A-Z]+=11155111: refused$/);

    // Declared a test chain (CHAIN_ID_<NETWORK>=31337): accepted; the native coin is still the network's, no explorer link.
    const chains = await createChainClients(given(anvil.url, () => foundry.id), 50);
    try {
      assert.deepEqual(networkNames.map((network) => chains[network].client.chain?.nativeCurrency.symbol), ['ETH', 'ETH', 'BNB', 'BNB']);
      assert.equal(chains.bnb.client.chain?.nativeCurrency.name, 'BNB');
      assert.equal(chains.ethereum.client.chain?.blockExplorers, undefined, 'a test chain has no public explorer');
    } finally {
      for (const network of networkNames) chains[network].receipts.close();
    }
  } finally {
    await anvil.stop();
  }
});

test('each network\'s public chain: its id, coin and explorer', () => {
  assert.deepEqual(Object.fromEntries(networkNames.map((n) => [n, [networkFacts[n].chainId, networkFacts[n].coin.symbol, networkFacts[n].explorer]])), {
    ethereum: [1, 'ETH', 'https://etherscan.io'],
    optimism: [10, 'ETH', 'https://optimistic.etherscan.io'],
    bnb: [56, 'BNB', 'https://bscscan.com'],
    opbnb: [204, 'BNB', 'https://opbnb.bscscan.com'],
  });
});
