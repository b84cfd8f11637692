import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createWalletClient, http } from 'viem';
import { foundry } from 'viem/chains';
import { mnemonicToAccount } from 'viem/accounts';
import { startAnvil } from './anvil-process.ts';
import { createChainClients } from './chain-clients.ts';
import { networkNames, type NetworkName } from '#shared/networks.ts';
import type { ChainEndpoint } from './chain-supervisor.ts';

test('a managed node\'s receipts come with its new heads over WebSocket, not with the next poll', async () => {
  const anvil = await startAnvil({ chainId: foundry.id });
  const endpoints = Object.fromEntries(networkNames.map((network) => [network, { network, url: anvil.url, managed: true }])) as Record<NetworkName, ChainEndpoint>;
  // A one-minute poll: only a pushed head can end the wait within the test.
  const chains = await createChainClients(endpoints, 60_000);
  const { client, receipts } = chains.ethereum;
  try {
    const sender = mnemonicToAccount('test test test test test test test test test test test junk');
    const wallet = createWalletClient({ account: sender, chain: foundry, transport: http(anvil.url) });
    await client.request({ method: 'evm_setAutomine' as never, params: [false] as never });
    const hash = await wallet.sendTransaction({ to: sender.address, value: 1n });
    const waited = receipts.wait(hash, 30_000);
    // The wait's first look finds it pending; then the block is mined.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const started = performance.now();
    await client.request({ method: 'evm_mine' as never, params: [] as never });
    assert.equal((await waited).transactionHash, hash);
    assert.ok(performance.now() - started < 5_000, `found ${Math.round(performance.now() - started)} ms after the block was mined`);
  } finally {
    for (const network of networkNames) chains[network].receipts.close();
    await anvil.stop();
  }
});
