import { createTestClient, http, parseEther } from 'viem';
import { foundry } from 'viem/chains';
import { generatePrivateKey } from 'viem/accounts';
import { startAnvil, type AnvilProcess } from '../../src/chain/anvil-process.ts';
import { loadRelayerLanes } from '../../src/chain/platform-account.ts';
import { loadConfig } from '../../src/config/config.ts';

/**
 * A chain node the platform does not run (its `RPC_URL_ETHEREUM`), as a provider's would be: an anvil
 * of the test's own, every relayer lane of a fresh relayer key funded on it, mining a block every
 * `blockSeconds` when given (as real networks do), on demand otherwise. `blockTime` starts anvil with
 * `--block-time` instead, which takes fractions of a second (0.45 s as BNB Smart Chain, 0.25 s as
 * opBNB); `anvil_setIntervalMining` takes whole seconds only.
 */
export async function startExternalNode(options: { blockSeconds?: number; blockTime?: number; port?: number } = {}): Promise<{ node: AnvilProcess; relayerKey: `0x${string}` }> {
  const node = await startAnvil({ chainId: foundry.id, port: options.port ?? 0, ...(options.blockTime !== undefined && { blockTime: options.blockTime }) });
  const controls = createTestClient({ mode: 'anvil', chain: foundry, transport: http(node.url) });
  const relayerKey = generatePrivateKey();
  for (const lane of loadRelayerLanes({ privateKey: relayerKey, dataDir: node.url, vault: undefined as never, count: loadConfig({}).relayerLanes })) {
    await controls.setBalance({ address: lane.address, value: parseEther('1000') });
  }
  if (options.blockSeconds) await controls.setIntervalMining({ interval: options.blockSeconds });
  return { node, relayerKey };
}
