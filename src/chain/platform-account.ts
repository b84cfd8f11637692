import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseEther, type LocalAccount } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { localAccount } from './local-account.ts';
import type { KeyVault } from '../shared/key-vault.ts';
import type { Logger } from '../shared/logger.ts';
import type { ChainClients } from './chain-clients.ts';
import { networkNames } from '../shared/networks.ts';

/**
 * The platform's treasury and relayer account: it owns VIXP (mints), deploys contracts and pays
 * gas for users' transfers. RELAYER_PRIVATE_KEY when configured; otherwise created once and kept
 * encrypted in `dataDir/relayer.key`.
 */
export function loadPlatformAccount(options: {
  privateKey?: `0x${string}` | undefined;
  dataDir: string;
  vault: KeyVault;
}): LocalAccount {
  if (options.privateKey) return localAccount(options.privateKey);
  const file = path.join(options.dataDir, 'relayer.key');
  if (!existsSync(file)) {
    writeFileSync(file, options.vault.encrypt(generatePrivateKey()), { mode: 0o600, flag: 'wx' });
  }
  return localAccount(options.vault.decrypt(readFileSync(file, 'utf8').trim()) as `0x${string}`);
}

const minimumGasBalance = parseEther('100');

/** On the anvil chains we run, the relayer is given gas money; a real node's relayer is funded by the operator. */
export async function fundRelayerOnManagedChains(chains: ChainClients, address: `0x${string}`, logger: Logger): Promise<void> {
  await Promise.all(networkNames.map(async (network) => {
    const { client, managed } = chains[network];
    const balance = await client.getBalance({ address });
    if (balance >= minimumGasBalance) return;
    if (!managed) {
      logger.warn({ network, address, balance: balance.toString() }, 'relayer gas balance is low: fund it');
      return;
    }
    await client.request({ method: 'anvil_setBalance' as never, params: [address, `0x${parseEther('1000000').toString(16)}`] as never });
  }));
}
