import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { concat, keccak256, parseEther, stringToHex, type Address, type Hex, type LocalAccount } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { localAccount } from './local-account.ts';
import type { KeyVault } from '#shared/key-vault.ts';
import type { Logger } from '#shared/logger.ts';
import type { ChainClients } from './chain-clients.ts';
import { networkNames } from '#shared/networks.ts';

/**
 * The platform's treasury and relayer account: it owns VIXP (mints), deploys contracts and pays
 * gas for users' transfers. RELAYER_PRIVATE_KEY when configured; otherwise created once and kept
 * encrypted in `dataDir/relayer.key`.
 */
export function loadPlatformAccount(options: PlatformKeyOptions): LocalAccount {
  return localAccount(loadPlatformKey(options));
}

interface PlatformKeyOptions {
  privateKey?: `0x${string}` | undefined;
  dataDir: string;
  vault: KeyVault;
}

function loadPlatformKey(options: PlatformKeyOptions): Hex {
  if (options.privateKey) return options.privateKey;
  const file = path.join(options.dataDir, 'relayer.key');
  if (!existsSync(file)) {
    writeFileSync(file, options.vault.encrypt(generatePrivateKey()), { mode: 0o600, flag: 'wx' });
  }
  return options.vault.decrypt(readFileSync(file, 'utf8').trim()) as Hex;
}

/**
 * The relayer's lanes: the platform account first, then `count - 1` accounts derived from its key
 * (`keccak256(key || "vixpay:relayer-lane:<i>")`), so every instance holding the platform key has the
 * same lanes and nothing more needs keeping secret. Each lane has its own nonce sequence.
 */
export function loadRelayerLanes(options: PlatformKeyOptions & { count: number }): LocalAccount[] {
  return relayerLaneKeys(loadPlatformKey(options), options.count).map(localAccount);
}

/** The lanes' private keys of file custody from the platform key (for `keys migrate`, which puts them into the token). */
export function relayerLaneKeys(key: Hex, count: number): Hex[] {
  return Array.from({ length: count }, (_, i) => (i === 0 ? key : keccak256(concat([key, stringToHex(`vixpay:relayer-lane:${i}`)]))));
}

/**
 * The platform key of file custody where one exists (RELAYER_PRIVATE_KEY, or `dataDir/relayer.key`
 * opened with `vault`), never made: undefined without either.
 */
export function existingPlatformKey(options: PlatformKeyOptions): Hex | undefined {
  if (options.privateKey) return options.privateKey;
  const file = path.join(options.dataDir, 'relayer.key');
  return existsSync(file) ? options.vault.decrypt(readFileSync(file, 'utf8').trim()) as Hex : undefined;
}

const minimumGasBalance = parseEther('100');

/** On the anvil chains we run, the relayer lanes are given gas money; a real node's are funded by the operator. */
export async function fundRelayerOnManagedChains(chains: ChainClients, addresses: readonly Address[], logger: Logger): Promise<void> {
  await Promise.all(networkNames.flatMap((network) => addresses.map(async (address) => {
    const { client, managed } = chains[network];
    const balance = await client.getBalance({ address });
    if (balance >= minimumGasBalance) return;
    if (!managed) {
      logger.warn({ network, address, balance: balance.toString() }, 'relayer gas balance is low: fund it');
      return;
    }
    await client.request({ method: 'anvil_setBalance' as never, params: [address, `0x${parseEther('1000000').toString(16)}`] as never });
  })));
}
