import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { concat, formatEther, keccak256, parseEther, stringToHex, type Address, type Hex, type LocalAccount } from 'viem';
import { minimumGasBalance } from './fund-lanes.ts';
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

/** Lanes already reported low by this process (network:address): the line is written once, not per command or restart of a part. */
const reportedLow = new Set<string>();

/**
 * On the anvil chains we run, the relayer lanes are given gas money; a real node's are funded by the
 * operator (`vixpay lanes fund`). Lanes low on such a node are logged in one line, once per process
 * and only when `warn` (the server: a CLI command beside it does not repeat it); `/readyz` and
 * `vixpay_relayer_lane_gas_low` report them all along.
 */
export async function fundRelayerOnManagedChains(chains: ChainClients, addresses: readonly Address[], logger: Logger, options: { warn: boolean } = { warn: true }): Promise<void> {
  const low: Array<{ network: string; lane: number; address: Address; balance: string }> = [];
  await Promise.all(networkNames.flatMap((network) => addresses.map(async (address, lane) => {
    const { client, managed } = chains[network];
    const balance = await client.getBalance({ address });
    if (balance >= minimumGasBalance) return;
    if (!managed) {
      if (!reportedLow.has(`${network}:${address}`)) low.push({ network, lane, address, balance: formatEther(balance) });
      return;
    }
    await client.request({ method: 'anvil_setBalance' as never, params: [address, `0x${parseEther('1000000').toString(16)}`] as never });
  })));
  if (low.length === 0 || !options.warn) return;
  for (const { network, address } of low) reportedLow.add(`${network}:${address}`);
  const networks = [...new Set(low.map((l) => l.network))];
  logger.warn({ lanes: low, minimum: formatEther(minimumGasBalance) },
    `relayer gas balance is low on ${low.length} lane(s) of ${networks.join(', ')}: fund them with \`vixpay lanes fund --network ${networks[0]} --amount X\``);
}
